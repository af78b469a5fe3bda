import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { freePort } from './free-port.js';

/**
 * RabbitMQ and NATS (JetStream) brokers of the soak's own, on ports and in directories of their
 * own, so it can restart them mid-backfill without touching the machine's brokers. Both keep their
 * data on disk across a restart (durable queues with persistent messages; JetStream's file store).
 * `restart` stops the broker with SIGTERM (a clean stop, as an operator's restart does) and starts it
 * again on the same port with the same data.
 */
export interface OwnBroker {
  url: string;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function listening(port: number, child: ChildProcess, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${what} exited while starting`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => resolve(true));
      socket.once('error', () => resolve(false));
      socket.setTimeout(1000, () => resolve(false));
    }).finally(() => undefined);
    if (open) return;
    await sleep(250);
  }
  throw new Error(`${what} did not listen on ${port} within ${timeoutMs / 1000} s`);
}

function groupKill(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Gone already.
  }
}

/** Runs `command` in a process group of its own, restartable; `onSpawn` hears each pid (the reaper). */
async function ownBroker(
  what: string,
  port: number,
  start: () => ChildProcess,
  onSpawn: (pid: number | undefined) => void,
): Promise<OwnBroker & { port: number }> {
  let child: ChildProcess | undefined;
  const launch = async () => {
    child = start();
    onSpawn(child.pid);
    await listening(port, child, what);
  };
  const halt = async () => {
    const stopping = child;
    if (!stopping) return;
    child = undefined;
    const exited = new Promise((resolve) => {
      if (stopping.exitCode !== null || stopping.signalCode !== null) resolve(undefined);
      else stopping.once('exit', resolve);
    });
    groupKill(stopping, 'SIGTERM');
    const timer = setTimeout(() => groupKill(stopping, 'SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  };
  await launch();
  return {
    port,
    url: '',
    async restart() {
      await halt();
      await launch();
    },
    stop: halt,
  };
}

/** `nats-server -js` with a file store under `dir`. */
export async function startOwnNats(
  dir: string,
  onSpawn: (pid: number | undefined) => void,
): Promise<OwnBroker> {
  const port = await freePort();
  const store = join(dir, 'nats');
  mkdirSync(store, { recursive: true });
  const broker = await ownBroker(
    'nats-server',
    port,
    () =>
      spawn('nats-server', ['-js', '-sd', store, '-a', '127.0.0.1', '-p', String(port)], {
        detached: true,
        stdio: 'ignore',
      }),
    onSpawn,
  );
  return { ...broker, url: `nats://127.0.0.1:${port}` };
}

/**
 * A second RabbitMQ node (`rabbitmq-server` from the system's install, its own node name, ports,
 * Erlang cookie and data under `dir`, no plugins); the guest user may connect from loopback.
 */
export async function startOwnRabbitmq(
  dir: string,
  onSpawn: (pid: number | undefined) => void,
): Promise<OwnBroker> {
  const port = await freePort();
  const home = join(dir, 'rabbitmq');
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, 'enabled_plugins'), '[].\n');
  const env = {
    ...process.env,
    HOME: home,
    RABBITMQ_NODENAME: `ferrysoak${port}@localhost`,
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(await freePort()),
    RABBITMQ_MNESIA_BASE: join(home, 'mnesia'),
    RABBITMQ_LOG_BASE: join(home, 'log'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(home, 'enabled_plugins'),
    RABBITMQ_CONFIG_FILE: join(home, 'rabbitmq'),
    RABBITMQ_ADVANCED_CONFIG_FILE: join(home, 'advanced.config'),
    RABBITMQ_PID_FILE: join(home, 'pid'),
  };
  const broker = await ownBroker(
    'rabbitmq-server',
    port,
    () => spawn('/usr/lib/rabbitmq/bin/rabbitmq-server', [], { env, detached: true, stdio: 'ignore' }),
    onSpawn,
  );
  return { ...broker, url: `amqp://127.0.0.1:${port}/` };
}
