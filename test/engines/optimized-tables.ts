/**
 * Optimized and vacuumed tables for `npm run test:engines` (docs/bronze.md, "Optimize and vacuum"): a table of
 * 1,000 small versions, and one partitioned, each built by the real sink in memory (test/support/
 * small-files-table.ts: the emulator's pipeline would take minutes a hundred versions), copied to the
 * emulator's S3, optimized and vacuumed there by the product's own `optimizeTable` and `vacuumTable` through
 * the S3 adapters, vacuum's clock injected to stand a day and eight days later. Spark + Delta Lake and delta-rs
 * must then read the same rows from a few files, read the versions before optimize by time travel within the
 * retention, prune the optimized partitions, and after vacuum read the latest version while the small files
 * are gone.
 */
import { randomUUID } from 'node:crypto';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import pLimit from 'p-limit';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AwsClients } from '../../local/aws/clients.ts';
import { S3DeltaStore } from '../../shared/bronze/aws/s3-delta-store.ts';
import { S3TableFiles } from '../../shared/bronze/aws/s3-table-files.ts';
import type { BronzeConfigInput } from '../../shared/bronze/config.ts';
import { logKey } from '../../shared/bronze/delta-log.ts';
import { DEFAULT_RETENTION_MS, DEFAULT_TARGET_FILE_BYTES } from '../../shared/bronze/maintenance-config.ts';
import { type OptimizeResult, optimizeTable } from '../../shared/bronze/optimize.ts';
import { vacuumTable } from '../../shared/bronze/vacuum.ts';
import { systemClock } from '../../shared/kernel/clock.ts';
import { SMALL_FILES_TABLE, sinkSmallFiles, smallFileKey } from '../support/small-files-table.ts';
import type { MemoryDelta } from '../unit/bronze/memory.ts';
import {
  ENGINES,
  type Engine,
  EngineRefusedError,
  type EngineRow,
  type EngineServer,
} from './engine-server.ts';
import { listKeys } from './write-table.ts';

const DAY = 86_400_000;

type Row = Readonly<Record<string, string | null>>;

interface OptimizedCase {
  readonly name: string;
  readonly versions: number;
  readonly bronze: BronzeConfigInput;
  /** Manifest version v's rows: data columns as engines.py answers them (longs as their digits). */
  readonly rows: (v: number) => readonly Row[];
  /** Versions each engine reads by time travel after optimize (Spark reads many small files slowly). */
  readonly travelTo: Readonly<Record<Engine, readonly number[]>>;
  /** Live files once optimized (one a partition: they are far under the 100 MiB target). */
  readonly filesAfter: number;
  /** Filters on the partition column, the files each must scan after optimize and the rows it returns. */
  readonly pruning?: readonly { readonly predicate: string; readonly files: number; readonly rows: number }[];
}

const REGIONS = ['eu west', 'us/east', '100%'] as const;

const CASES: readonly OptimizedCase[] = [
  {
    name: 'optimized-1000-versions',
    versions: 1000,
    bronze: { format: 'jsonl' },
    rows: (v) => [
      { id: String(2 * v), name: `n${v}` },
      { id: String(2 * v + 1), name: null },
    ],
    // Version 999 is the last before optimize, its 1,000 files the slowest read (about 40 s in Spark).
    travelTo: { spark: [0, 999], 'delta-rs': [0, 100, 500, 999] },
    filesAfter: 1,
  },
  {
    name: 'optimized-partitioned',
    // Spark reads a partitioned table's small files at about 0.3 s each: few versions.
    versions: 20,
    bronze: { format: 'jsonl', schemaHints: { region: 'string' }, partitionBy: ['region'] },
    rows: (v) => REGIONS.map((region, i) => ({ id: String(10 * v + i), region })),
    travelTo: { spark: [0, 19], 'delta-rs': [0, 10, 19] },
    filesAfter: REGIONS.length,
    pruning: [
      { predicate: "region = 'us/east'", files: 1, rows: 20 },
      { predicate: "region = '100%'", files: 1, rows: 20 },
      { predicate: "region <> 'eu west'", files: 2, rows: 40 },
    ],
  },
];

/** Comparable rows: every column, keys sorted, the sink's columns included. */
const canonical = (rows: readonly EngineRow[]) =>
  rows
    .map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).sort(([a], [b]) => (a < b ? -1 : 1)))))
    .sort();

/** The rows a reader must see at Delta version d: manifest versions 1..d+1 (one sink commit a version). */
function expectedAt(c: OptimizedCase, d: number): string[] {
  const rows: EngineRow[] = [];
  for (let v = 1; v <= d + 1; v++)
    for (const row of c.rows(v))
      rows.push({
        ...row,
        _rescued_data: null,
        _source_file: `s3://landing/${smallFileKey(v)}`,
        _manifest_version: String(v),
      });
  return canonical(rows);
}

const jsonl = (rows: readonly Row[]) =>
  rows.map((r) => JSON.stringify({ ...r, id: Number(r.id) })).join('\n');

export function describeOptimizedTables(context: () => { server: EngineServer; clients: AwsClients }) {
  describe.each(CASES.map((c) => [c.name, c] as const))('%s', (name, c) => {
    let table: { uri: string; bucket: string; prefix: string; small: Set<string> };
    let optimized: OptimizeResult;
    let t0 = 0;
    /** The last version before optimize. */
    const before = c.versions - 1;
    const at = (engine: string, what: string) => `[${name}] ${engine} ${what}`;
    const store = () => {
      const { clients } = context();
      return {
        delta: new S3DeltaStore(clients.s3, table.bucket, table.prefix),
        files: new S3TableFiles(clients.s3, table.bucket, table.prefix),
      };
    };

    beforeAll(async () => {
      const memory = await sinkSmallFiles({
        versions: c.versions,
        body: (v) => jsonl(c.rows(v)),
        bronze: c.bronze,
      });
      const bucket = `inlet-optimized-${randomUUID().slice(0, 8)}`;
      const prefix = `bronze/${SMALL_FILES_TABLE}`;
      await copyToS3(context().clients, memory, bucket, prefix);
      table = { uri: `s3://${bucket}/${prefix}`, bucket, prefix, small: new Set(memory.files.keys()) };
      t0 = Date.now();
      optimized = await optimizeTable(
        { ...systemClock, ...store(), newId: randomUUID },
        {
          table: SMALL_FILES_TABLE,
          targetFileBytes: DEFAULT_TARGET_FILE_BYTES,
          finishBy: Number.POSITIVE_INFINITY,
        },
      );
    }, 900_000);

    it('optimize rewrote the small files as a few, in one commit a partition', () => {
      expect(optimized).toMatchObject({
        commits: c.filesAfter,
        filesRemoved: table.small.size,
        filesAdded: c.filesAfter,
        binsSkipped: 0,
      });
    });

    it.each(ENGINES)(
      '%s reads the same rows from a few files, and OPTIMIZE last in the history',
      async (engine) => {
        const { server } = context();
        const latest = await server.read(engine, table.uri);
        expect(latest.version, at(engine, 'latest version')).toBe(c.versions - 1 + c.filesAfter);
        expect(canonical(latest.rows), at(engine, 'latest rows')).toEqual(expectedAt(c, before));
        expect(await server.liveFiles(engine, table.uri), at(engine, 'live files')).toBe(c.filesAfter);
        const [last] = await server.history(engine, table.uri, 1);
        expect(last?.operation, at(engine, 'history')).toBe('OPTIMIZE');
      },
    );

    it.each(ENGINES)(
      '%s reads the versions before optimize by time travel, from their small files',
      async (engine) => {
        const { server } = context();
        for (const v of c.travelTo[engine]) {
          const read = await server.read(engine, table.uri, v);
          expect(canonical(read.rows), at(engine, `version ${v}`)).toEqual(expectedAt(c, v));
        }
      },
    );

    if (c.pruning)
      it.each(ENGINES)('%s prunes the optimized partitions by the partition column', async (engine) => {
        const { server } = context();
        for (const q of c.pruning ?? []) {
          const got = await server.skipping(engine, table.uri, q.predicate);
          const want = { files: q.files, of: c.filesAfter, ...(engine === 'spark' ? { rows: q.rows } : {}) };
          expect(got, at(engine, `where ${q.predicate}`)).toEqual(want);
        }
      });

    it('vacuum keeps every file within the retention, then deletes the small ones; the latest version reads, the old ones no more', async () => {
      const { server, clients } = context();
      const vacuum = (days: number) =>
        vacuumTable(
          { now: () => t0 + days * DAY, ...store() },
          { table: SMALL_FILES_TABLE, retentionMs: DEFAULT_RETENTION_MS },
        );
      expect(await vacuum(1), 'a day after optimize').toMatchObject({
        filesDeleted: 0,
        filesKept: table.small.size,
      });
      expect(await vacuum(8), 'eight days after optimize').toMatchObject({
        filesDeleted: table.small.size,
        filesKept: 0,
      });
      const left = (await listKeys(clients, table.bucket, `${table.prefix}/`)).filter(
        (k) => !k.includes('/_delta_log/'),
      );
      expect(left.length, 'data files left in storage').toBe(c.filesAfter);
      expect(
        left.filter((k) => table.small.has(k.slice(table.prefix.length + 1))),
        'small files left',
      ).toEqual([]);
      for (const engine of ENGINES) {
        const latest = await server.read(engine, table.uri);
        expect(canonical(latest.rows), at(engine, 'latest rows after vacuum')).toEqual(expectedAt(c, before));
        expect(await server.liveFiles(engine, table.uri), at(engine, 'live files after vacuum')).toBe(
          c.filesAfter,
        );
        // Past the retention the versions before optimize name deleted files: refused, as after Delta's VACUUM.
        const old = await server.read(engine, table.uri, before).then(
          (r) => `read ${r.rows.length} rows`,
          (e: unknown) => (e instanceof EngineRefusedError ? undefined : String(e)),
        );
        expect(old, at(engine, `version ${before} after vacuum`)).toBeUndefined();
      }
    });
  });
}

/** The table's data files, commits and checkpoints at `s3://bucket/prefix/`, as the sink would have put them. */
async function copyToS3(clients: AwsClients, delta: MemoryDelta, bucket: string, prefix: string) {
  await clients.s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const objects: [string, Uint8Array | string][] = [
    ...delta.files,
    ...[...delta.commits].map(([v, body]) => [logKey(v), body] as [string, string]),
    ...[...delta.logFiles].map(([n, bytes]) => [`_delta_log/${n}`, bytes] as [string, Uint8Array]),
  ];
  const limit = pLimit(16);
  await Promise.all(
    objects.map(([key, body]) =>
      limit(() =>
        clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}/${key}`, Body: body })),
      ),
    ),
  );
}
