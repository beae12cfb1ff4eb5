// `inlet`: where every file is, locally (`npm start`) or on a deployed stack (`--stack NAME`).

import { Command, InvalidArgumentError } from 'commander';
import type { StartOptions } from './commands/backfill.ts';
import { CliError } from './errors.ts';
import { sayNodeSupport } from './node-support.ts';
import type { CliTarget } from './target.ts';

// Each command's code (and the AWS SDK behind it) is imported when that command runs, not here: `--help`
// and a typo answer in a fraction of a second (bench/cli.ts measures it).

const integer = (value: string) => {
  const n = Number.parseInt(value, 10);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('a whole number');
  return n;
};

const examples = (...lines: string[]) => `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;

const program = new Command('inlet')
  .description('Exactly-once S3 file ingestion: inspect and operate a pipeline.')
  .option(
    '--stack <name>',
    'a deployed stack (region and credentials from the usual AWS environment); default: local mode',
  )
  .option('--json', 'machine-readable output on stdout: exact values, full text', false)
  .showHelpAfterError('(run `npx inlet --help` for the commands, `npx inlet <command> --help` for examples)')
  .addHelpText(
    'after',
    `${examples('npm start                      # local mode first: emulator, stack, pipeline', 'npx inlet status', 'npx inlet --stack Inlet --json quarantine --days 1')}`,
  );

type Global = { stack?: string; json: boolean };
const global = () => program.opts<Global>();

async function withTarget(fn: (target: CliTarget, json: boolean) => Promise<void>): Promise<void> {
  const { resolveTarget } = await import('./target.ts');
  const target = await resolveTarget(global());
  try {
    await fn(target, global().json);
  } finally {
    target.close();
  }
}

program
  .command('status')
  .description('per table: head version, files, bytes, last commit, pending; queues and DLQs')
  .addHelpText('after', examples('inlet status', 'inlet --json status | jq .tables'))
  .action(() => withTarget(async (t, json) => (await import('./commands/status.ts')).status(t, json)));
program
  .command('files')
  .argument('<key-or-prefix>', 'an object key, or a key prefix')
  .option('--table <name>', 'only this table')
  .option('--limit <n>', 'at most this many', integer, 1000)
  .description('state, batch and manifest version of each file under a key or prefix')
  .addHelpText(
    'after',
    examples(
      "inlet files 'orders/2026/11/29/a b+c.json'",
      'inlet files orders/2026/11/ --table orders --limit 20',
    ),
  )
  .action((keyOrPrefix: string, o: { table?: string; limit: number }) =>
    withTarget(async (t, json) =>
      (await import('./commands/files.ts')).files(t, keyOrPrefix, { ...o, json }),
    ),
  );
program
  .command('manifests')
  .option('--table <name>', 'only this table')
  .option('--since <version>', 'versions from this one on', integer)
  .description('committed manifest versions')
  .addHelpText(
    'after',
    examples('inlet manifests --table orders', 'inlet --json manifests --table orders --since 40'),
  )
  .action((o: { table?: string; since?: number }) =>
    withTarget(async (t, json) => (await import('./commands/manifests.ts')).manifests(t, { ...o, json })),
  );
program
  .command('quarantine')
  .option('--days <n>', 'how many days back', integer, 7)
  .description('bad input that was set aside, with the reason')
  .addHelpText(
    'after',
    examples('inlet quarantine --days 1', 'inlet --json quarantine   # full reasons and bodies'),
  )
  .action((o: { days: number }) =>
    withTarget(async (t, json) => (await import('./commands/quarantine.ts')).quarantine(t, { ...o, json })),
  );
program
  .command('dlq')
  .description('dead-letter queues')
  .addHelpText('after', examples('inlet dlq redrive'))
  .command('redrive')
  .description('move dead-lettered messages back to their queues')
  .addHelpText('after', examples('inlet dlq redrive', 'inlet --stack Inlet dlq redrive'))
  .action(() => withTarget(async (t, json) => (await import('./commands/dlq.ts')).redrive(t, json)));
program
  .command('put')
  .argument('<paths...>', 'local files')
  .requiredOption('--table <name>', 'the table whose landing prefix receives them')
  .description("upload files to a table's landing prefix")
  .addHelpText('after', examples('inlet put data/a.json data/b.json --table orders'))
  .action((paths: string[], o: { table: string }) =>
    withTarget(async (t, json) => (await import('./commands/put.ts')).put(t, paths, { ...o, json })),
  );
const backfill = program
  .command('backfill')
  .description('list S3 and ingest what the ledger has not seen, through the backfill state machine')
  .addHelpText(
    'after',
    examples(
      'inlet backfill start --table orders --wait',
      'inlet backfill status orders-20261130T101500Z-x1y2',
    ),
  );
backfill
  .command('start')
  .requiredOption('--table <name>', 'the table to fill (a reprocess: a new table, live: false)')
  .option('--prefix <prefix>', "only keys under this prefix (within the table's prefix)")
  .option('--start-after <key>', 'resume after this key (a failed run prints it)')
  .option('--inventory <url>', 'read this S3 Inventory report (s3://.../manifest.json) instead of listing')
  .option('--modified-after <date>', 'only objects last modified at or after this ISO-8601 time')
  .option('--modified-before <date>', 'only objects last modified before this ISO-8601 time')
  .option('--glob <glob>', "only keys matching this glob, on top of the table's filters")
  .option('--max-objects <n>', 'stop after listing this many objects', integer)
  .option('--dry-run', 'list, filter and check the ledger; enqueue nothing', false)
  .option('--wait', 'wait for the run to end, with a progress bar', false)
  .option('--name <name>', 'execution name (default: <table>-<time>-<random>)')
  .description('start a backfill; prints its execution name')
  .addHelpText(
    'after',
    examples(
      'inlet backfill start --table orders --prefix orders/2026/11/ --dry-run --wait',
      "inlet backfill start --table orders --start-after 'orders/2026/11/29/a.json'",
    ),
  )
  .action((o: Omit<StartOptions, 'json'>) =>
    withTarget(async (t, json) => {
      const { backfillStart } = await import('./commands/backfill.ts');
      process.exitCode = await backfillStart(t, { ...o, json });
    }),
  );
backfill
  .command('status')
  .argument('<execution>', 'execution name or ARN')
  .option('--wait', 'wait for the run to end, with a progress bar', false)
  .description('a backfill run: status, counts, continuations; how to resume a failed one')
  .addHelpText('after', examples('inlet backfill status orders-20261130T101500Z-x1y2 --wait'))
  .action((execution: string, o: { wait: boolean }) =>
    withTarget(async (t, json) => {
      const { backfillStatus } = await import('./commands/backfill.ts');
      process.exitCode = await backfillStatus(t, execution, { ...o, json });
    }),
  );
program
  .command('table')
  .argument('<name>', 'a table with a bronze (Delta Lake) sink')
  .option(
    '--location <s3-url>',
    "the Delta table root (default: the table's, from the stack or .inlet/local.json)",
  )
  .description('the Delta table: version, schema, row count, rescued rows')
  .addHelpText(
    'after',
    examples(
      'inlet table orders',
      'inlet --stack Inlet table orders',
      'inlet table orders --location s3://lake/bronze/orders',
    ),
  )
  .action((name: string, o: { location?: string }) =>
    withTarget(async (t, json) => (await import('./commands/table.ts')).table(t, name, { ...o, json })),
  );
program
  .command('tail')
  .requiredOption('--table <name>', 'the table')
  .option('--from <version>', 'first version to print (your checkpoint + 1)', integer, 1)
  .description('committed versions in order, one JSON line each, from --from to the newest')
  .addHelpText('after', examples('inlet tail --table orders --from 41'))
  .action((o: { table: string; from: number }) =>
    withTarget(async (t) => (await import('./commands/tail.ts')).tail(t, o)),
  );
program
  .command('down')
  .description("stop local mode's background emulator (its data goes with it)")
  .addHelpText('after', examples('inlet down'))
  .action(async () => {
    const { stopBackgroundEmulator } = await import('../local/state.ts');
    console.log(stopBackgroundEmulator() ? 'emulator stopped' : 'no background emulator was running');
  });

sayNodeSupport('inlet: ');
try {
  await program.parseAsync();
} catch (error) {
  if (error instanceof CliError) {
    console.error(`inlet: ${error.message}`);
    process.exit(1);
  }
  throw error;
}
