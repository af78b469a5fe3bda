/** What `ferry start` shows once everything runs: where each part listens, and how to reach it. */
export interface StartedStack {
  seconds: string;
  urls: { api: string; read: string; write: string; search: string; proxy: string; mcp: string };
  metricsUrl?: string;
  temporalAddress: string;
  temporalUi?: string;
  sandboxUrl: string;
  databaseUrl: string;
  project: { id: string; name: string; apiKey: string };
  /** FERRY_ALLOW_PRIVATE_DESTINATIONS as the stack runs with it (`npm start` turns it on unless set). */
  allowPrivateDestinations: boolean;
}

/**
 * The banner `ferry start` prints. A development setting that would be dangerous in production
 * (destinations on private networks) is shown there, so nobody carries it over unknowingly.
 */
export function startBanner(stack: StartedStack): string {
  const { urls, project } = stack;
  return [
    '',
    `  Ferry is running (ready in ${stack.seconds} s)`,
    '',
    `  api        ${urls.api}      reference: ${urls.api}/docs`,
    `  console    ${urls.api.replace(/\/v1$/, '')}/console/   (sign in with the API key below)`,
    `  read       ${urls.read}`,
    `  write      ${urls.write}`,
    `  search     ${urls.search}`,
    `  proxy      ${urls.proxy}`,
    `  mcp        ${urls.mcp}   (AI agents: ?project=${project.name}&integration=…&groupRef=…, see README "AI agents")`,
    `  metrics    ${stack.metricsUrl ?? 'off (FERRY_METRICS_PORT=0)'}`,
    `  Temporal   ${stack.temporalAddress}${stack.temporalUi ? `   UI: ${stack.temporalUi}` : ''}`,
    `  sandbox    ${stack.sandboxUrl}   (API key: sandbox-demo-key)`,
    `  database   ${stack.databaseUrl.replace(/:[^:@/]+@/, ':***@')}`,
    '',
    `  project    ${project.name} (${project.id})`,
    `  API key    ${project.apiKey}`,
    '',
    ...(stack.allowPrivateDestinations
      ? [
          '  warning    private-network destinations are ALLOWED (FERRY_ALLOW_PRIVATE_DESTINATIONS=true, on for',
          '             development): webhooks and provider calls may reach localhost and private addresses.',
          '             Never carry this into production; `ferry server` leaves it off unless set.',
          '',
        ]
      : []),
    `  try: curl -H 'X-Api-Key: ${project.apiKey}' ${urls.api}/projects/${project.name}/integrations`,
    '  Ctrl-C stops everything.',
    '',
  ].join('\n');
}
