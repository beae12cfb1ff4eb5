// `inlet`: where every file is, locally (`npm start`) or on a deployed stack (`--stack NAME`).
import { Command, InvalidArgumentError } from 'commander';
import { stopBackgroundEmulator } from '../local/state.ts';
import { destroyClients } from '../shared/aws/clients.ts';
import { redrive } from './commands/dlq.ts';
import { files } from './commands/files.ts';
import { manifests } from './commands/manifests.ts';
import { put } from './commands/put.ts';
import { quarantine } from './commands/quarantine.ts';
import { status } from './commands/status.ts';
import { CliError, type CliTarget, resolveTarget } from './target.ts';

const integer = (value: string) => {
  const n = Number.parseInt(value, 10);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('a whole number');
  return n;
};

const program = new Command('inlet')
  .description('Exactly-once S3 file ingestion: inspect and operate a pipeline.')
  .option(
    '--stack <name>',
    'a deployed stack (region and credentials from the usual AWS environment); default: local mode',
  )
  .option('--json', 'machine-readable output', false)
  .showHelpAfterError();

type Global = { stack?: string; json: boolean };
const global = () => program.opts<Global>();

async function withTarget(fn: (target: CliTarget, json: boolean) => Promise<void>): Promise<void> {
  const target = await resolveTarget(global());
  try {
    await fn(target, global().json);
  } finally {
    destroyClients(target.clients);
    target.cloudwatch.destroy();
  }
}

program
  .command('status')
  .description('per table: head version, files, bytes, last commit, pending; queues and DLQs')
  .action(() => withTarget(status));
program
  .command('files')
  .argument('<key-or-prefix>', 'an object key, or a key prefix')
  .option('--table <name>', 'only this table')
  .option('--limit <n>', 'at most this many', integer, 1000)
  .description('state, batch and manifest version of each file under a key or prefix')
  .action((keyOrPrefix: string, o: { table?: string; limit: number }) =>
    withTarget((t, json) => files(t, keyOrPrefix, { ...o, json })),
  );
program
  .command('manifests')
  .option('--table <name>', 'only this table')
  .option('--since <version>', 'versions from this one on', integer)
  .description('committed manifest versions')
  .action((o: { table?: string; since?: number }) => withTarget((t, json) => manifests(t, { ...o, json })));
program
  .command('quarantine')
  .option('--days <n>', 'how many days back', integer, 7)
  .description('bad input that was set aside, with the reason')
  .action((o: { days: number }) => withTarget((t, json) => quarantine(t, { ...o, json })));
program
  .command('dlq')
  .description('dead-letter queues')
  .command('redrive')
  .description('move dead-lettered messages back to their queues')
  .action(() => withTarget(redrive));
program
  .command('put')
  .argument('<paths...>', 'local files')
  .requiredOption('--table <name>', 'the table whose landing prefix receives them')
  .description("upload files to a table's landing prefix")
  .action((paths: string[], o: { table: string }) => withTarget((t, json) => put(t, paths, { ...o, json })));
program
  .command('down')
  .description("stop local mode's background emulator (its data goes with it)")
  .action(() => {
    console.log(stopBackgroundEmulator() ? 'emulator stopped' : 'no background emulator was running');
  });

try {
  await program.parseAsync();
} catch (error) {
  if (error instanceof CliError) {
    console.error(`inlet: ${error.message}`);
    process.exit(1);
  }
  throw error;
}
