import Type, { type Static } from 'typebox';
import { DateTime, NfcName, ProjectIdOrName, UpdateMask, Uuid } from './common.js';

const TopicName = NfcName({
  minLength: 1,
  maxLength: 200,
  pattern: '^\\S(.*\\S)?$',
  description: 'Unique within the project; no leading or trailing spaces.',
});

export const TopicSchema = Type.Object({
  id: Uuid,
  projectId: Uuid,
  name: Type.String(),
  createTime: DateTime,
  updateTime: DateTime,
});
export type TopicView = Static<typeof TopicSchema>;

export const CreateTopicBody = Type.Object({ name: TopicName }, { additionalProperties: false });

export const TopicPatch = Type.Object({ name: Type.Optional(TopicName) }, { additionalProperties: false });

/** `{name}` as the public API renames a topic, or `{updateMask, topic}` as other updates here do. */
export const UpdateTopicBody = Type.Object(
  {
    name: Type.Optional(TopicName),
    updateMask: Type.Optional(UpdateMask),
    topic: Type.Optional(TopicPatch),
  },
  { additionalProperties: false },
);

export const TopicParams = Type.Object({
  projectIdOrName: ProjectIdOrName,
  topicId: Type.String({ minLength: 1, description: 'The topic ID.' }),
});
