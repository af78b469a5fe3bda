import type { DestinationTestView } from '../../schemas/destinations.js';
import { CLIENT_OPTIONS_HELP, CommandError, FerryClient, clientArgs } from './http.js';

export const testHelp = [
  'Sends one test message to a destination now and prints what it answered; exits 1 when it was',
  'not delivered. Nothing is recorded and the destination’s health does not change.',
  '',
  '  --json            print the API’s answer as it is',
  CLIENT_OPTIONS_HELP,
  '',
  'Example:',
  '  FERRY_API_KEY=... ferry destinations test records --api-url http://localhost:8080',
].join('\n');

export async function testCommand(args: string[]): Promise<void> {
  const { values, positionals } = clientArgs(args, {});
  const [name, ...extra] = positionals;
  if (!name) throw new CommandError('which destination? ferry destinations test <name>');
  if (extra.length) throw new CommandError(`unexpected argument "${extra[0]}"`);
  const client = new FerryClient(values);
  const answer = (await client.call<DestinationTestView>(
    'POST',
    client.projectPath(`/destinations/${encodeURIComponent(name)}:test`),
  ))!;
  if (values.json) process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
  else {
    const said = [
      answer.status !== undefined && `HTTP ${answer.status}`,
      `${answer.durationMs} ms`,
      answer.error ?? answer.answer,
    ].filter(Boolean);
    process.stdout.write(
      `${answer.delivered ? 'delivered' : 'not delivered'} to ${name} (message ${answer.messageId}): ${said.join(', ')}\n`,
    );
  }
  if (!answer.delivered) process.exitCode = 1;
}
