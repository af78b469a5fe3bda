/** Jest runs the TypeScript sources as native ES modules (node --experimental-vm-modules), transformed by SWC. */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'es6' } },
    ],
  },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  globalSetup: '<rootDir>/test/setup/global-setup.js',
  globalTeardown: '<rootDir>/test/setup/global-teardown.js',
  testSequencer: '<rootDir>/test/setup/sequencer.js',
  testTimeout: 60_000,
  maxWorkers: 2,
  // Each suite's ES modules stay in the worker's memory (vm modules): past this a worker is replaced
  // after its file, instead of growing to gigabytes and slowing every later suite with collection.
  workerIdleMemoryLimit: '1536MB',
};
