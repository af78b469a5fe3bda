import { describe, expect, it } from '@jest/globals';
import type { InstallationConfigMessage } from '../../src/temporal/contracts/installation.js';
import { configMessageProblem } from '../../workflows/config-message-problem.js';

const valid: InstallationConfigMessage = {
  configId: 'config',
  revisionId: 'revision',
  content: { provider: 'sandboxApiKey' },
  reads: [{ objectName: 'contacts', schedule: '*/30 * * * *', backfill: false }],
};

describe('configMessageProblem', () => {
  it('accepts a well-formed config message', () => {
    expect(configMessageProblem(valid)).toBeUndefined();
    expect(configMessageProblem({ ...valid, reads: [] })).toBeUndefined();
  });

  it('names what is wrong with a malformed one', () => {
    const read = valid.reads[0];
    const cases: [unknown, string | RegExp][] = [
      [null, 'the config must be an object'],
      [{ ...valid, configId: '' }, 'configId is required'],
      [{ ...valid, revisionId: 7 }, 'revisionId is required'],
      [{ ...valid, content: undefined }, 'content is required'],
      [{ ...valid, reads: {} }, 'reads must be an array'],
      [{ ...valid, reads: [{ ...read, objectName: '' }] }, 'every read needs an objectName'],
      [{ ...valid, reads: [read, read] }, 'read "contacts" appears twice'],
      [{ ...valid, reads: [{ ...read, schedule: undefined }] }, 'read "contacts" needs a schedule'],
      [
        { ...valid, reads: [{ ...read, schedule: 'every day' }] },
        /^read "contacts": .*not a valid cron expression/,
      ],
    ];
    for (const [config, problem] of cases) {
      expect(configMessageProblem(config as InstallationConfigMessage)).toMatch(problem);
    }
  });
});
