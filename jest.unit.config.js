/** Jest for tests that need neither PostgreSQL nor Temporal: `node --experimental-vm-modules node_modules/jest/bin/jest.js -c jest.unit.config.js <path>`. */
import base from './jest.config.js';

export default { ...base, globalSetup: undefined, globalTeardown: undefined };
