// `inlet`: where every file is, locally (`npm start`) or on a deployed stack (`--stack NAME`).
import { Command, InvalidArgumentError } from 'commander';
import { stopBackgroundEmulator } from '../local/state.ts';
import { destroyClients } from '../shared/aws/clients.ts';
import { backfillStart, backfillStatus, type StartOptions } from './commands/backfill.ts';
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
const backfill = program
  .command('backfill')
  .description('list S3 and ingest what the ledger has not seen, through the backfill state machine');
backfill
  .command('start')
  .requiredOption('--table <name>', 'the table to fill (a reprocess: a new table, live: false)')
  .option('--prefix <prefix>', "only keys under this prefix (within the table's prefix)")
  .option('--start-after <key>', 'resume after this key (a failed run prints it)')
  .option('--modified-after <date>', 'only objects last modified at or after this ISO-8601 time')
  .option('--modified-before <date>', 'only objects last modified before this ISO-8601 time')
  .option('--glob <glob>', "only keys matching this glob, on top of the table's filters")
  .option('--max-objects <n>', 'stop after listing this many objects', integer)
  .option('--dry-run', 'list, filter and check the ledger; enqueue nothing', false)
  .option('--wait', 'wait for the run to end, with a progress bar', false)
  .option('--name <name>', 'execution name (default: <table>-<time>-<random>)')
  .description('start a backfill; prints its execution name')
  .action((o: Omit<StartOptions, 'json'>) =>
    withTarget(async (t, json) => {
      process.exitCode = await backfillStart(t, { ...o, json });
    }),
  );
backfill
  .command('status')
  .argument('<execution>', 'execution name or ARN')
  .option('--wait', 'wait for the run to end, with a progress bar', false)
  .description('a backfill run: status, counts, continuations; how to resume a failed one')
  .action((execution: string, o: { wait: boolean }) =>
    withTarget(async (t, json) => {
      process.exitCode = await backfillStatus(t, execution, { ...o, json });
    }),
  );
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
