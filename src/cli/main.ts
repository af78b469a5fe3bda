/**
 * One entry per command: `ferry <name...> [--options]`. Modules load lazily so each command starts
 * fast. `help` is what `ferry <command> --help` prints below the summary (its options, an example).
 */
const commands: Record<
  string,
  { summary: string; help?: () => Promise<string>; run: (args: string[]) => Promise<void> }
> = {
  deploy: {
    summary:
      'Deploy a manifest, printing how it differs from the live revisions: <manifest.yaml> [--dry-run]',
    help: async () => (await import('./client/deploy.js')).deployHelp,
    run: async (a) => (await import('./client/deploy.js')).deployCommand(a),
  },
  ...Object.fromEntries(
    (['integrations', 'installations', 'connections', 'destinations'] as const).map((resource) => [
      `${resource} list`,
      {
        summary: `List the project's ${resource} as a table: [--json]`,
        help: async () => (await import('./client/lists.js')).listHelp(resource),
        run: async (a: string[]) => (await import('./client/lists.js')).listCommand(resource, a),
      },
    ]),
  ),
  'destinations test': {
    summary: 'Send a test message to a destination and print its answer: <name>',
    help: async () => (await import('./client/destinations.js')).testHelp,
    run: async (a) => (await import('./client/destinations.js')).testCommand(a),
  },
  'operations logs': {
    summary: "Print an operation's log: <operationId> [--follow]",
    help: async () => (await import('./client/operations.js')).logsHelp,
    run: async (a) => (await import('./client/operations.js')).logsCommand(a),
  },
  read: {
    summary: 'Read one object of a group now: <integration> <object> --group <ref> [--since <time>]',
    help: async () => (await import('./client/reads.js')).readHelp,
    run: async (a) => (await import('./client/reads.js')).readCommand(a),
  },
  pause: {
    summary: "Pause a group's scheduled reads: <integration> --group <ref> [--object <name>]",
    help: async () => (await import('./client/reads.js')).pauseHelp('pause'),
    run: async (a) => (await import('./client/reads.js')).pauseCommand('pause', a),
  },
  resume: {
    summary: "Resume a group's paused reads: <integration> --group <ref> [--object <name>]",
    help: async () => (await import('./client/reads.js')).pauseHelp('resume'),
    run: async (a) => (await import('./client/reads.js')).pauseCommand('resume', a),
  },
  start: {
    summary: 'Start the whole stack on embedded defaults (development)',
    run: async (a) => (await import('./start.js')).start(a),
  },
  server: {
    summary: 'Run the api, read, write, search, proxy and MCP listeners',
    run: async () => (await import('./production.js')).server(),
  },
  worker: { summary: 'Run the Temporal worker', run: async () => (await import('./production.js')).worker() },
  'bundle-workflows': {
    summary:
      'Bundle the workflow code into a file for workers to load (FERRY_WORKFLOW_BUNDLE): --out <file> [--tracing]',
    run: async (a) => (await import('./workflow-bundle.js')).bundleWorkflowsCommand(a),
  },
  migrate: {
    summary: 'Apply database migrations and exit',
    run: async () => (await import('./production.js')).migrateCommand(),
  },
  'projects create': {
    summary: 'Create a project: --name <name> [--org <orgId>]',
    run: async (a) => (await import('./admin.js')).createProjectCommand(a),
  },
  'api-keys create': {
    summary:
      'Create an API key: --project <idOrName> --label <label> [--frontend: only what the embeddable components use]',
    run: async (a) => (await import('./admin.js')).createApiKeyCommand(a),
  },
  'builders token': {
    summary: 'Print a bearer token for a builder: --email <email>',
    run: async (a) => (await import('./admin.js')).builderTokenCommand(a),
  },
  reconcile: {
    summary: 'Restart missing installation workflows from PostgreSQL: [--project <idOrName>]',
    run: async (a) => (await import('./reconcile.js')).reconcileCommand(a),
  },
  'retention run': {
    summary: 'Run a cleanup pass now through the running retention workflow; prints what it deleted',
    run: async () => (await import('./retention.js')).retentionRunCommand(),
  },
  'bench retention': {
    summary: 'Benchmark a cleanup pass over aged rows: [--records 1000000] [--aged 0.5] [--batch-size 1000]',
    run: async (a) => (await import('../../bench/retention.js')).benchRetention(a),
  },
  'bench installations': {
    summary: 'Benchmark installation workflows: [--count 1000] [--idle-seconds 60]',
    run: async (a) => (await import('../../bench/installations.js')).benchInstallations(a),
  },
  'bench worker-memory': {
    summary: "Measure a worker's memory at ready, started each way it can be: [--settle-seconds 15]",
    run: async (a) => (await import('../../bench/worker-memory.js')).benchWorkerMemory(a),
  },
  'bench api': {
    summary: 'Benchmark list and get endpoints against a bare Koa + pg handler: [--rows 10000] [--seconds 3]',
    run: async (a) => (await import('../../bench/api.js')).benchApi(a),
  },
  'bench read': {
    summary:
      'Benchmark a backfill through Ferry against a plain loop: [--records 200000] [--page-size 500] [--destination <type>,…|all]',
    run: async (a) => (await import('../../bench/read.js')).benchRead(a),
  },
  'bench full-read': {
    summary:
      'Benchmark a full read with change detection: backfill, changes, one scheduled read: [--records 100000] [--changes 50]',
    run: async (a) => (await import('../../bench/full-read.js')).benchFullRead(a),
  },
  'bench soak': {
    summary:
      'Soak scheduled reads against a second-precision, late-committing sandbox while killing the worker: [--minutes 30] [--kill-every-seconds 240] [--rate 2]',
    run: async (a) => (await import('../../bench/soak.js')).benchSoak(a),
  },
  'bench soak-destinations': {
    summary:
      'Backfill into each destination type with the worker SIGKILLed twice and the server restarted once; count on the server: [--types postgres,s3,nats,rabbitmq] [--records 200000]',
    run: async (a) => (await import('../../bench/soak-destinations.js')).benchSoakDestinations(a),
  },
  mcp: {
    summary:
      'Serve MCP on stdio for one installation: --project <idOrName> --integration <idOrName> --group <groupRef> (key in FERRY_API_KEY, or FERRY_PROJECT_JWT)',
    run: async (a) => (await import('./mcp.js')).mcpCommand(a),
  },
  sandbox: {
    summary: 'Serve the sandbox provider (default port 8090)',
    run: async (a) => (await import('./sandbox.js')).sandboxCommand(a),
  },
};

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((name) => name.length));
  return [
    'Usage: ferry <command> [options]',
    '',
    ...Object.entries(commands).map(([name, command]) => `  ${name.padEnd(width)}  ${command.summary}`),
  ].join('\n');
}

const asksForHelp = (arg: string | undefined) => arg !== undefined && ['help', '--help', '-h'].includes(arg);

export async function main(argv: string[]): Promise<void> {
  // Help asked for goes to stdout and succeeds; a mistake goes to stderr, names what was wrong, and fails.
  if (!argv.length || asksForHelp(argv[0])) {
    process.stdout.write(`${usage()}\n`);
    return;
  }
  const name = [argv.slice(0, 2).join(' '), argv[0]].find((candidate) => candidate && commands[candidate]);
  if (!name) {
    process.stderr.write(`ferry: unknown command "${argv.join(' ')}"\n\n${usage()}\n`);
    process.exitCode = 2;
    return;
  }
  const rest = argv.slice(name.split(' ').length);
  if (rest.includes('--help') || rest.includes('-h')) {
    const help = await commands[name].help?.();
    process.stdout.write(
      `Usage: ferry ${name} [options]\n\n  ${commands[name].summary}\n${help ? `\n${help}\n` : ''}`,
    );
    return;
  }
  await commands[name].run(rest);
}

main(process.argv.slice(2)).catch((error: Error) => {
  process.stderr.write(`ferry: ${error.message}\n`);
  process.exit(1);
});
