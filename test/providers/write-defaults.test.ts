import { describe, expect, it } from '@jest/globals';
import { applyValueDefaults } from '../../src/domain/writes/prepare.js';

describe('write defaults', () => {
  const config = {
    selectedValueDefaults: { stage: { value: 'lead', applyOnUpdate: 'never' as const } },
    // as the public React components send them
    selectedFieldSettings: {
      source: { default: { stringValue: 'web' } },
      score: {
        default: { integerValue: 0 },
        writeOnCreate: 'never' as const,
        writeOnUpdate: 'always' as const,
      },
      active: { default: { booleanValue: false }, writeOnUpdate: 'never' as const },
    },
  };

  it('fill on create what the record leaves out, unless writeOnCreate is never', () => {
    expect(applyValueDefaults({ name: 'Ada', source: 'import' }, config, 'create')).toEqual({
      name: 'Ada',
      source: 'import',
      stage: 'lead',
      active: false,
    });
  });

  it('fill on update only the fields whose setting says always', () => {
    expect(applyValueDefaults({ id: '1' }, config, 'update')).toEqual({ id: '1', score: 0 });
    expect(applyValueDefaults({ id: '1', score: 7 }, config, 'update')).toEqual({ id: '1', score: 7 });
  });
});
