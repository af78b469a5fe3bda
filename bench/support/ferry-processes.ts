import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../src/config.js';
import { freePort } from './free-port.js';
import { startSandboxProcess } from './sandbox-process.js';

/**
 * What the read benches start beside Ferry's API: the worker and the sandbox provider, each in a
 * process of its own; and the messages Ferry delivers for a page, made by Ferry's own functions, for
 * the plain loops.
 */

export interface SandboxProcess {
  url: string;
  pid: number | undefined;
  close(): Promise<void>;
}

/** The sandbox provider in a process of its own, as a real provider would be. */
export async function startSandbox(contacts: number): Promise<SandboxProcess> {
  const port = await freePort();
  const child = await startSandboxProcess(['--port', String(port), '--contacts', String(contacts)]);
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    async close() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface WorkerChild {
  child: ChildProcess;
  stop(): Promise<void>;
  /** SIGKILL, as a crash or an OOM killer would: no shutdown of any kind. */
  kill(): Promise<void>;
}

/** `onSpawn` hears the pid at once (a reaper); `logFile` keeps everything the worker logs. */
export async function startWorker(
  env: NodeJS.ProcessEnv,
  nodeArgs: string[] = [],
  { onSpawn, logFile }: { onSpawn?: (pid: number | undefined) => void; logFile?: string } = {},
): Promise<WorkerChild> {
  const child = spawn(process.execPath, [...nodeArgs, join(projectRoot, 'bin', 'ferry.js'), 'worker'], {
    env: { ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  onSpawn?.(child.pid);
  if (logFile) child.stderr!.pipe(createWriteStream(logFile, { flags: 'a' }));
  let log = '';
  // Older workers (the baseline's) logged no repair pass; newer ones log their first.
  const repairs = existsSync(join(projectRoot, 'src', 'cli', 'repair-loop.ts'));
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-20_000);
      // The worker repairs installations when it starts; one created meanwhile could be taken
      // for an orphan, so the bench waits for that first pass to finish.
      if (log.includes('"msg":"worker ready"') && (log.includes('"msg":"repair pass"') || !repairs))
        resolve();
    });
    child.once('exit', (code) => reject(new Error(`the worker exited (${code}):\n${log}`)));
  });
  child.stderr!.on('data', (c: Buffer) => {
    for (const l of c.toString().split('\n')) if (l.startsWith('PROF')) process.stderr.write(l + '\n');
  });
  const ended = () => child.exitCode !== null || child.signalCode !== null;
  const halt = async (signal: NodeJS.Signals) => {
    if (ended()) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  return { child, stop: () => halt('SIGTERM'), kill: () => halt('SIGKILL') };
}

/** One message as the plain loops send it: its id, the JSON a webhook receives, and the webhook's headers. */
export interface PlainMessage {
  messageId: string;
  body: string;
  headers: Record<string, string>;
}

export type PageMessages = (records: Record<string, unknown>[]) => PlainMessage[];

/**
 * The messages Ferry delivers for a page, made by Ferry's own message functions (no database, no
 * Temporal): every field selected (`selectedFieldsAuto: "all"`), the envelope of a backfill, at most
 * 500 records and 300 KB a message, each signed with a Standard Webhooks secret.
 */
export async function ferryShapedMessages(): Promise<PageMessages> {
  const { fieldMapper } = await import('../../src/delivery/record-mapping.js');
  const { messageIdFor, splitIntoMessages } = await import('../../src/delivery/messages.js');
  const { generateSigningSecret, signatureHeaders } = await import('../../src/delivery/signing.js');
  const mapRecord = fieldMapper({ allFields: true });
  const secrets = [generateSigningSecret()];
  const context = {
    action: 'read' as const,
    projectId: randomUUID(),
    provider: 'sandboxApiKey',
    groupRef: 'group-baseline',
    groupName: 'group-baseline',
    consumerRef: 'consumer-baseline',
    consumerName: 'consumer-baseline',
    installationId: randomUUID(),
    installationUpdateTime: new Date().toISOString(),
    objectName: 'contacts',
    rawObjectName: 'contacts',
    operationId: randomUUID(),
    operationTime: new Date().toISOString(),
    readType: 'backfill' as const,
  };
  let pageIndex = 0;
  return (records) => {
    const page = pageIndex++;
    return splitIntoMessages(
      context,
      records.map((record) => mapRecord(record)),
      500,
    ).map(({ partIndex, body }) => {
      const messageId = messageIdFor(context.operationId, page, partIndex);
      const text = typeof body === 'string' ? body : body.toString('utf8');
      return {
        messageId,
        body: text,
        headers: {
          'content-type': 'application/json',
          ...signatureHeaders({ messageId, timestamp: new Date(), body, secrets }),
        },
      };
    });
  };
}
