// docs/performance.md's side-by-side tables, made from a run's bench/results.json so the figures in the doc
// are always one run's, never a hand copy that drifts: the pipelines users would build instead of Inlet
// (Powertools, a naive list-and-diff loader, delta-rs beside the bronze sink) and the benchmarks whose worth
// depends on waiting for AWS (backfill partitions, group commit, the sink's parallel reads), each in the
// emulator's own mode and at AWS's latencies (`awsLatency`). A figure the run did not measure reads "-".
import * as z from '../shared/kernel/zod.ts';

const num = z.optional(z.number());
const perFile = z.optional(
  z.looseObject({ sqs: num, dynamodbWriteUnits: num, dynamodbReadUnits: num, s3: num }),
);
const ingestPeer = z.optional(
  z.looseObject({
    files: num,
    events: num,
    filesPerSecond: num,
    usdPerMillionFiles: num,
    requestsPerFile: perFile,
    lost: num,
    duplicated: num,
    docsExampleKey: z.optional(z.looseObject({ lost: num, duplicated: num })),
  }),
);
const deltaRs = z.optional(
  z.looseObject({
    rows: num,
    rowsPerSecond: num,
    mbPerSecond: num,
    bytesWritten: num,
    valuesNulled: num,
    requestsPerFile: z.optional(z.looseObject({ s3: num })),
  }),
);
const sink = z.optional(
  z.looseObject({
    files: num,
    rows: num,
    rowsPerSecond: num,
    mbPerSecond: num,
    bytesWritten: num,
    deltaVersions: num,
  }),
);
const naive = z.optional(
  z.looseObject({
    new: num,
    existing: num,
    naiveSeconds: num,
    naiveRequests: num,
    naiveWriteUnits: num,
    inletSeconds: num,
    inletRequests: num,
  }),
);
const backfill = z.optional(
  z.looseObject({
    objects: num,
    partitions: num,
    concurrency: num,
    objectsPerSecond: num,
    serialObjectsPerSecond: num,
    inventoryObjectsPerSecond: num,
  }),
);
const groupCommit = z.optional(
  z.looseObject({
    batches: num,
    ungroupedBatches: num,
    filesPerSecond: num,
    ungroupedFilesPerSecond: num,
    versions: num,
  }),
);
const modeResults = {
  peers: z.optional(z.looseObject({ inlet: ingestPeer, powertools: ingestPeer, deltaRs })),
  sink,
  incrementalVsNaive: naive,
  backfill,
  groupCommit,
};

/** The keys the tables read; every one optional, so a partial run (`--only`) still renders. */
export const SideBySideResults = z.looseObject({
  mode: z.optional(z.string()),
  measuredAt: z.optional(z.string()),
  benchSeconds: num,
  benchmarkSeconds: z.optional(z.record(z.string(), z.number())),
  loadAverage1m: z.optional(z.looseObject({ min: num, median: num, max: num, cores: num })),
  ...modeResults,
  cost: z.optional(
    z.looseObject({ bronze: z.optional(z.looseObject({ usdPerMillionFiles: num, s3GetsPerFile: num })) }),
  ),
  awsLatency: z.optional(z.looseObject(modeResults)),
});
export type SideBySideResults = z.infer<typeof SideBySideResults>;
type Mode = z.infer<z.ZodMiniObject<typeof modeResults>>;

const DASH = '-';
const fmt = (n: number | undefined, digits = 0) =>
  n === undefined
    ? DASH
    : n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const ratio = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined || b === 0 ? undefined : a / b;
const times = (r: number | undefined) => (r === undefined ? DASH : `${fmt(r, 2)}x`);
const row = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;

/** A pipeline's cells in one mode. */
interface Cells {
  readonly input: string;
  readonly throughput: string;
  readonly againstInlet: string;
  readonly requests: string;
  readonly dollars: string;
  readonly outcome: string;
}

const requestsOf = (r: z.infer<typeof perFile>) =>
  r ? `${fmt(r.sqs, 2)} / ${fmt(r.dynamodbWriteUnits, 2)} / ${fmt(r.s3, 3)}` : DASH;

function inletCells(m: Mode): Cells {
  const p = m.peers?.inlet;
  return {
    input: p ? `${fmt(p.files)} files, ${fmt(p.events)} events` : DASH,
    throughput: p ? `${fmt(p.filesPerSecond)} files/s` : DASH,
    againstInlet: p ? '1x' : DASH,
    requests: requestsOf(p?.requestsPerFile),
    dollars: p?.usdPerMillionFiles === undefined ? DASH : `$${fmt(p.usdPerMillionFiles, 2)}`,
    outcome: p ? `${fmt(p.lost)} lost, ${fmt(p.duplicated)} doubled` : DASH,
  };
}

function powertoolsCells(m: Mode): Cells {
  const p = m.peers?.powertools;
  const docs = p?.docsExampleKey;
  return {
    input: p ? 'the same events' : DASH,
    throughput: p ? `${fmt(p.filesPerSecond)} files/s` : DASH,
    againstInlet: times(ratio(p?.filesPerSecond, m.peers?.inlet?.filesPerSecond)),
    requests: requestsOf(p?.requestsPerFile),
    dollars: p?.usdPerMillionFiles === undefined ? DASH : `$${fmt(p.usdPerMillionFiles, 2)}`,
    outcome: p
      ? `${fmt(p.lost)} lost, ${fmt(p.duplicated)} doubled${docs ? `; keyed by \`messageId\` (the docs' example): ${fmt(docs.lost)} lost, **${fmt(docs.duplicated)} doubled**` : ''}`
      : DASH,
  };
}

function naiveCells(m: Mode): Cells {
  const n = m.incrementalVsNaive;
  const files = n?.new;
  const naiveRate = ratio(files, n?.naiveSeconds);
  const inletRate = ratio(files, n?.inletSeconds);
  const writeUnits = ratio(n?.naiveWriteUnits, files);
  return {
    input: n ? `${fmt(files)} new files among ${fmt(n.existing)}` : DASH,
    throughput: n
      ? `${fmt(naiveRate)} files/s (${fmt(n.naiveSeconds, 1)} s a run; Inlet on the same files ${inletRate === undefined ? DASH : `${fmt(inletRate)} files/s`})`
      : DASH,
    againstInlet: times(ratio(naiveRate, inletRate)),
    requests: n
      ? `${fmt(ratio(n.naiveRequests, files), 2)} requests (LIST, Scan, write)${writeUnits === undefined ? '' : `, ${fmt(writeUnits, 2)} write units`}, growing with the bucket`
      : DASH,
    dollars: DASH,
    outcome: n ? 'no events: one list-and-diff run' : DASH,
  };
}

function sinkCells(m: Mode, bronzeUsd: number | undefined): Cells {
  const s = m.sink;
  return {
    input: s ? `${fmt(s.files)} JSONL files, ${fmt(s.rows)} rows, ${fmt(s.deltaVersions)} commits` : DASH,
    throughput: s ? `${fmt(s.rowsPerSecond)} rows/s, ${fmt(s.mbPerSecond, 2)} MB/s` : DASH,
    againstInlet: s ? '1x' : DASH,
    requests: s ? `writes ${fmt(s.bytesWritten)} bytes` : DASH,
    dollars: bronzeUsd === undefined ? DASH : `+$${fmt(bronzeUsd, 2)} (\`cost.bronze\`)`,
    outcome: s ? 'reads committed versions: each file once; type mismatches kept in `_rescued_data`' : DASH,
  };
}

function deltaRsCells(m: Mode): Cells {
  const d = m.peers?.deltaRs;
  return {
    input: d ? 'the same files, one commit per version' : DASH,
    throughput: d ? `${fmt(d.rowsPerSecond)} rows/s, ${fmt(d.mbPerSecond, 2)} MB/s` : DASH,
    againstInlet: times(ratio(d?.rowsPerSecond, m.sink?.rowsPerSecond)),
    requests: d ? `writes ${fmt(d.bytesWritten)} bytes` : DASH,
    dollars: DASH,
    outcome: d ? `no events (a re-run appends again); **${fmt(d.valuesNulled)} values nulled**` : DASH,
  };
}

const FIGURES: readonly [keyof Cells, string][] = [
  ['input', 'input (same in both modes)'],
  ['throughput', 'throughput'],
  ['againstInlet', 'rate against Inlet, same run and mode (delta-rs: against the sink)'],
  ['requests', 'requests per file: SQS / DynamoDB write units / S3 (the lakes: bytes written)'],
  ['dollars', '$ per million files'],
  ['outcome', 'exactly once under duplicate events'],
];

/** The pipelines side by side: one column per pipeline and mode, one row per figure. */
export function peersTable(results: SideBySideResults): string {
  const emulator: Mode = results;
  const aws: Mode = results.awsLatency ?? {};
  const bronzeUsd = results.cost?.bronze?.usdPerMillionFiles;
  const pipelines: [string, (m: Mode) => Cells][] = [
    ['Inlet', inletCells],
    ['Powertools idempotency + batch', powertoolsCells],
    ['naive list-and-diff', naiveCells],
    ["Inlet's bronze sink", (m) => sinkCells(m, bronzeUsd)],
    ['delta-rs `write_deltalake`', deltaRsCells],
  ];
  const columns = pipelines.flatMap(([name, cells]) => [
    { title: `${name}: emulator`, cells: cells(emulator) },
    { title: `${name}: AWS latencies`, cells: cells(aws) },
  ]);
  return [
    row(['figure', ...columns.map((c) => c.title)]),
    row(['---', ...columns.map(() => '---')]),
    ...FIGURES.map(([key, label]) => row([label, ...columns.map((c) => c.cells[key])])),
  ].join('\n');
}

/** Backfill partitions, group commit and the sink's parallel reads, one row each, both modes. */
export function bothModesTable(results: SideBySideResults): string {
  const modes: Mode[] = [results, results.awsLatency ?? {}];
  const backfillCell = (m: Mode) => {
    const b = m.backfill;
    return b
      ? `${fmt(b.serialObjectsPerSecond)} / ${fmt(b.objectsPerSecond)} / ${fmt(b.inventoryObjectsPerSecond)} objects/s (parallel ${times(ratio(b.objectsPerSecond, b.serialObjectsPerSecond))} serial)`
      : DASH;
  };
  const groupCell = (m: Mode) => {
    const g = m.groupCommit;
    return g
      ? `${fmt(g.filesPerSecond, 1)} / ${fmt(g.ungroupedFilesPerSecond, 1)} files/s (**${times(ratio(g.filesPerSecond, g.ungroupedFilesPerSecond))}**; ${fmt(g.versions)} versions for ${fmt(g.batches)} batches)`
      : DASH;
  };
  const sinkCell = (m: Mode) =>
    m.sink ? `${fmt(m.sink.rowsPerSecond)} rows/s, ${fmt(m.sink.mbPerSecond, 2)} MB/s` : DASH;
  const b = results.backfill;
  const g = results.groupCommit;
  const s = results.sink;
  return [
    row(['benchmark', 'emulator', 'AWS latencies']),
    row(['---', '---', '---']),
    row([
      `backfill of ${fmt(b?.objects)} objects: serial / ${fmt(b?.partitions)} partitions ${fmt(b?.concurrency)} at a time / from an S3 Inventory report`,
      ...modes.map(backfillCell),
    ]),
    row([
      `group commit, sealed batches of 10 files: ${fmt(g?.batches)} grouped / ${fmt(g?.ungroupedBatches ?? g?.batches)} one version per batch`,
      ...modes.map(groupCell),
    ]),
    row([
      `bronze sink catch-up, ${fmt(s?.files)} files read 16 at a time, ${fmt(s?.rows)} rows`,
      ...modes.map(sinkCell),
    ]),
  ].join('\n');
}

/**
 * Which run the tables are from: its mode and date, and, once it finished, its length and the machine's load
 * through it; a run's `results.partial.json` (written after each benchmark) says which benchmarks it had done.
 */
export function provenance(results: SideBySideResults): string {
  const load = results.loadAverage1m;
  const command = results.mode === 'quick' ? 'npm run bench -- --quick' : 'npm run bench';
  const run = `\`${command}\` started ${results.measuredAt ?? DASH}`;
  if (results.benchSeconds === undefined) {
    const done = Object.entries(results.benchmarkSeconds ?? {});
    const seconds = done.reduce((n, [, s]) => n + s, 0);
    return [
      `Generated by \`npx tsx bench/side-by-side.ts\` from the \`bench/results.partial.json\` of ${run},`,
      `not finished when generated: ${done.map(([name]) => name).join(', ')} done, ${fmt(seconds)} s of benchmarks.`,
    ].join(' ');
  }
  return [
    `Generated by \`npx tsx bench/side-by-side.ts\` from the \`bench/results.json\` of ${run},`,
    `${fmt(results.benchSeconds)} s of benchmarks,`,
    `1-minute load ${fmt(load?.median, 1)} median (${fmt(load?.min, 1)}-${fmt(load?.max, 1)}) on ${fmt(load?.cores)} cores.`,
  ].join(' ');
}

/** Replaces what lies between `<!-- name:begin -->` and `<!-- name:end -->` in `doc` with `content`. */
export function replaceBlock(doc: string, name: string, content: string): string {
  const begin = `<!-- ${name}:begin -->`;
  const end = `<!-- ${name}:end -->`;
  const from = doc.indexOf(begin);
  const to = doc.indexOf(end);
  if (from < 0 || to < from) throw new Error(`no ${begin} ... ${end} block in the document`);
  return `${doc.slice(0, from + begin.length)}\n${content}\n${doc.slice(to)}`;
}
