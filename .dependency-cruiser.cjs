/**
 * Ferry's floors, from the ground up. A module imports only from its own floor or below; nothing
 * imports a floor above it, and no two files import each other, directly or in a circle.
 *
 *   ground          src/core, src/schemas, src/temporal/contracts, src/config.ts, src/logger.ts,
 *                   src/metrics.ts, src/tracing.ts
 *   infrastructure  src/crypto, src/db, src/providers, src/delivery, src/temporal, src/sandbox
 *   domain          src/domain, src/notifications
 *   top             src/api, src/cli, src/mcp, activities, bench
 *
 * Workflows run in Temporal's deterministic sandbox: they import types from anywhere, but values
 * only from workflows/ itself and the pure ground modules (src/core, src/temporal/contracts).
 */
const ground = '^src/(core|schemas|temporal/contracts)/|^src/(config|logger|metrics|tracing)[.]ts$';
const infrastructure = '^src/(crypto|db|providers|delivery|sandbox)/|^src/temporal/(?!contracts/)';
const domain = '^src/(domain|notifications)/';
const top = '^src/(api|cli|mcp)/|^(activities|bench)/';
const workflows = '^workflows/';

const above = {
  ground: [infrastructure, domain, top, workflows],
  infrastructure: [domain, top, workflows],
  domain: [top, workflows],
};

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Files never import each other in a circle; split the shared part out instead.',
      from: { path: '^(src|workflows|activities|bench)/' },
      to: { circular: true },
    },
    ...Object.entries(above).map(([floor, higher]) => ({
      name: `${floor}-imports-upward`,
      severity: 'error',
      comment: `The ${floor} floor imports only from its own floor or below (see the README's architecture section).`,
      from: { path: { ground, infrastructure, domain }[floor] },
      to: { path: higher.join('|') },
    })),
    {
      name: 'workflow-imports-impure-value',
      severity: 'error',
      comment:
        'Workflows import values only from workflows/ and pure ground modules (src/core, src/temporal/contracts); anything else by type only.',
      from: { path: workflows },
      to: {
        path: '^(src|activities)/',
        pathNot: '^src/(core|temporal/contracts)/',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'core-is-pure',
      severity: 'error',
      comment: 'src/core runs inside workflows too: no Node built-ins, no I/O libraries.',
      from: { path: '^src/(core|temporal/contracts)/' },
      to: { dependencyTypes: ['core'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
    exclude: { path: '^(node_modules|test|\\.data|\\.tools)/' },
  },
};
