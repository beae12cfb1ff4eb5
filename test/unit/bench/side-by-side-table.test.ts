// docs/performance.md's side-by-side tables are rendered from a run's results, never copied by hand.
import { describe, expect, it } from 'vitest';
import {
  bothModesTable,
  peersTable,
  provenance,
  replaceBlock,
  SideBySideResults,
} from '../../../bench/side-by-side-table.ts';

const peers = (inletRate: number, powertoolsRate: number, docs = true) => ({
  inlet: {
    files: 5_000,
    events: 5_500,
    filesPerSecond: inletRate,
    usdPerMillionFiles: 1.33,
    requestsPerFile: { sqs: 1.36, dynamodbWriteUnits: 1.13, s3: 0.03 },
    lost: 0,
    duplicated: 0,
  },
  powertools: {
    files: 5_000,
    events: 5_500,
    filesPerSecond: powertoolsRate,
    usdPerMillionFiles: 2.43,
    requestsPerFile: { sqs: 1.32, dynamodbWriteUnits: 2.1, s3: 0.11 },
    lost: 0,
    duplicated: 0,
    ...(docs ? { docsExampleKey: { lost: 0, duplicated: 500 } } : {}),
  },
  deltaRs: {
    rows: 500_000,
    rowsPerSecond: 40_000,
    mbPerSecond: 3.1,
    bytesWritten: 6_000_000,
    valuesNulled: 500,
  },
});

const results = SideBySideResults.parse({
  mode: 'full',
  measuredAt: '2026-12-02T08:00:00.000Z',
  benchSeconds: 2_100,
  loadAverage1m: { min: 2, median: 4.5, max: 9, cores: 2 },
  peers: peers(80, 40),
  sink: {
    files: 20,
    rows: 500_000,
    rowsPerSecond: 20_000,
    mbPerSecond: 1.6,
    bytesWritten: 5_000_000,
    deltaVersions: 2,
  },
  incrementalVsNaive: {
    new: 1_000,
    existing: 100_000,
    naiveSeconds: 50,
    naiveRequests: 241,
    naiveWriteUnits: 1_000,
    inletSeconds: 10,
  },
  backfill: {
    objects: 102_000,
    partitions: 63,
    concurrency: 32,
    objectsPerSecond: 500,
    serialObjectsPerSecond: 1_000,
    inventoryObjectsPerSecond: 4_000,
  },
  groupCommit: {
    batches: 1_000,
    ungroupedBatches: 100,
    filesPerSecond: 300,
    ungroupedFilesPerSecond: 100,
    versions: 11,
  },
  cost: { bronze: { usdPerMillionFiles: 0.54 } },
  awsLatency: {
    peers: peers(50, 10, false),
    sink: { rowsPerSecond: 10_000, mbPerSecond: 0.8 },
    incrementalVsNaive: { new: 1_000, existing: 103_000, naiveSeconds: 100, inletSeconds: 20 },
    backfill: { objectsPerSecond: 2_000, serialObjectsPerSecond: 800, inventoryObjectsPerSecond: 3_000 },
    groupCommit: { batches: 1_000, filesPerSecond: 200, ungroupedFilesPerSecond: 25, versions: 11 },
  },
});

/** The cells of the row whose first cell starts with `label`. */
const cellsOf = (table: string, label: string) => {
  const line = table.split('\n').find((l) => l.startsWith(`| ${label}`));
  if (!line) throw new Error(`no row ${label}`);
  return line.slice(2, -2).split(' | ').slice(1);
};

describe('peersTable: the pipelines side by side, one column per pipeline and latency mode', () => {
  const table = peersTable(results);

  it('has a column for each of the five pipelines in each mode', () => {
    const header = cellsOf(table, 'figure');
    expect(header).toHaveLength(10);
    expect(header[0]).toBe('Inlet: emulator');
    expect(header[1]).toBe('Inlet: AWS latencies');
    expect(header[9]).toContain('delta-rs `write_deltalake`: AWS latencies');
  });

  it('puts each mode its own figures, and each ratio against Inlet within one mode', () => {
    const throughput = cellsOf(table, 'throughput');
    expect(throughput.slice(0, 4)).toEqual(['80 files/s', '50 files/s', '40 files/s', '10 files/s']);
    const against = cellsOf(table, 'rate against Inlet');
    // Powertools 40/80 on the emulator, 10/50 at AWS's latencies; naive (1,000/50 s) / (1,000/10 s); the
    // AWS pass's naive 10 / 50; delta-rs against the sink: 40,000 / 20,000 and 40,000 / 10,000.
    expect(against.slice(2, 6)).toEqual(['0.50x', '0.20x', '0.20x', '0.20x']);
    expect(against[8]).toBe('2.00x');
    expect(against[9]).toBe('4.00x');
  });

  it('reports requests, dollars and the outcome under duplicate events as the run counted them', () => {
    expect(cellsOf(table, 'requests per file')[2]).toBe('1.32 / 2.10 / 0.110');
    expect(cellsOf(table, 'requests per file')[4]).toContain(
      '0.24 requests (LIST, Scan, write), 1.00 write units',
    );
    expect(cellsOf(table, '$ per million files').slice(0, 4)).toEqual(['$1.33', '$1.33', '$2.43', '$2.43']);
    const outcome = cellsOf(table, 'exactly once');
    expect(outcome[0]).toBe('0 lost, 0 doubled');
    expect(outcome[2]).toContain('keyed by `messageId`');
    expect(outcome[2]).toContain('**500 doubled**');
    expect(outcome[3]).toBe('0 lost, 0 doubled');
    expect(outcome[8]).toContain('**500 values nulled**');
  });

  it('renders a figure the run did not measure as "-"', () => {
    const partial = peersTable(SideBySideResults.parse({ peers: peers(80, 40) }));
    expect(cellsOf(partial, 'throughput')[1]).toBe('-');
    expect(cellsOf(partial, 'throughput')[4]).toBe('-');
  });
});

describe('bothModesTable: backfill partitions, group commit and the sink in both modes', () => {
  const table = bothModesTable(results);

  it('states the sizes and each mode its rates and ratios', () => {
    expect(table).toContain('| backfill of 102,000 objects: serial / 63 partitions 32 at a time /');
    const backfill = cellsOf(table, 'backfill of 102,000 objects');
    expect(backfill[0]).toBe('1,000 / 500 / 4,000 objects/s (parallel 0.50x serial)');
    expect(backfill[1]).toBe('800 / 2,000 / 3,000 objects/s (parallel 2.50x serial)');
    expect(table).toContain(
      '| group commit, sealed batches of 10 files: 1,000 grouped / 100 one version per batch |',
    );
    const group = cellsOf(table, 'group commit');
    expect(group[0]).toContain('**3.00x**');
    expect(group[1]).toContain('**8.00x**');
  });
});

describe('provenance and replaceBlock', () => {
  it('names the command, the date, the length and the load of the run', () => {
    expect(provenance(results)).toContain('`npm run bench`');
    expect(provenance(results)).toContain('started 2026-12-02T08:00:00.000Z, 2,100 s of benchmarks');
    expect(provenance(results)).toContain('4.5 median (2.0-9.0) on 2 cores');
  });

  it("says a run's partial results are of a run not finished, and which benchmarks it had done", () => {
    const partial = SideBySideResults.parse({
      mode: 'full',
      measuredAt: '2026-12-02T08:00:00.000Z',
      benchmarkSeconds: { cost: 350, latency: 64 },
    });
    expect(provenance(partial)).toContain('`bench/results.partial.json`');
    expect(provenance(partial)).toContain(
      'not finished when generated: cost, latency done, 414 s of benchmarks',
    );
  });

  it('replaces only what lies between the block markers', () => {
    const doc = 'before\n<!-- t:begin -->\nold\n<!-- t:end -->\nafter\n';
    expect(replaceBlock(doc, 't', 'new')).toBe('before\n<!-- t:begin -->\nnew\n<!-- t:end -->\nafter\n');
  });

  it('refuses a document without the block', () => {
    expect(() => replaceBlock('no markers', 't', 'new')).toThrow(/no <!-- t:begin -->/);
  });
});
