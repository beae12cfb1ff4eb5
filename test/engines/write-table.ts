import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import type { AwsClients } from '../../local/aws/clients.ts';
import { S3DeltaStore } from '../../shared/bronze/aws/s3-delta-store.ts';
import { LAST_CHECKPOINT } from '../../shared/bronze/checkpoint.ts';
import { bronzeLocation } from '../../shared/bronze/config.ts';
import type { MetaDataAction } from '../../shared/bronze/delta-actions.ts';
import { logKey } from '../../shared/bronze/delta-log.ts';
import { SinkTable } from '../../shared/bronze/sink.ts';
import { loadSnapshot } from '../../shared/bronze/snapshot.ts';
import { SYMLINK_MANIFEST_DIR } from '../../shared/bronze/symlink-manifest.ts';
import type { AwsTarget } from '../../shared/kernel/aws/target.ts';
import { silentLog } from '../../shared/kernel/log.ts';
import { MemoryMetrics } from '../../shared/kernel/metrics.ts';
import { ENV } from '../../shared/kernel/names.ts';
import { sinkRuntimeFromEnv } from '../../shared/runtime/sink.ts';
import { functionEnv } from '../support/function-env.ts';
import { PipelineHarness } from '../support/harness.ts';
import type { LogEntry, Shape } from './shape.ts';

const TABLE = 'events';
const PREFIX = `${TABLE}/`;

/** A shape's table on the emulator, as the sink wrote it. */
export interface WrittenTable {
  readonly shape: Shape;
  readonly clients: AwsClients;
  readonly landingBucket: string;
  /** The Delta table's root, `s3://bucket/prefix`. */
  readonly uri: string;
  readonly bucket: string;
  readonly prefix: string;
  /** `_source_file` of a landing file, by its key under the table's prefix. */
  sourceFile(key: string): string;
  /** Deletes a landing file (a source gone before the sink reads it). */
  deleteLanding(key: string): Promise<void>;
  /** The actions of a Delta commit, parsed. */
  commit(deltaVersion: number): Promise<Record<string, Record<string, unknown>>[]>;
  /** Every key in the landing bucket. */
  landingKeys(): Promise<string[]>;
  /** What each Delta version is, in order: the sink's commits and other writers'. */
  readonly log: LogEntry[];
  /** The ingestion date (`YYYY-MM-DD`, the UTC day of its manifest's commit) of the shape's version by index. */
  ingestDate(index: number): string;
  /**
   * Commits the next Delta version as another writer would, with `If-None-Match: *` as delta-rs with
   * conditional put does: `commitInfo` (operation, its parameters as strings, engine) and any actions.
   */
  commitAsOther(
    info: { operation: string; operationParameters: Record<string, string>; engineInfo: string },
    ...actions: object[]
  ): Promise<void>;
  /** The table's metaData now (another writer's change starts from it). */
  metaData(): Promise<MetaDataAction>;
  /** The version `_last_checkpoint` names, if the sink wrote one. */
  lastCheckpoint(): Promise<number | undefined>;
  /**
   * Every manifest under `_symlink_format_manifest/`, by its partition directory (`''` unpartitioned): the
   * data files it lists, sorted, the scheme written `s3://` (Spark writes the `s3a://` it read through).
   */
  symlinkManifests(): Promise<Record<string, string[]>>;
}

/**
 * Writes a shape through the real pipeline on the emulator: each version's files land in S3, the batcher
 * and committer (real handlers) make them one manifest version, and the sink, built by the sink Lambda's
 * own composition root (`sinkRuntimeFromEnv`, with the shape's `sink` options), writes it as the next
 * Delta commit, or as several (parts), after any other writer's commits. `afterVersion` runs after each
 * manifest version is in the table (by its index; the streaming test reads between versions).
 */
export async function writeShape(
  shape: Shape,
  clients: AwsClients,
  target: Extract<AwsTarget, { kind: 'emulator' }>,
  afterVersion?: (table: WrittenTable, index: number) => Promise<void>,
): Promise<WrittenTable> {
  const h = await PipelineHarness.create(clients, {
    config: { tables: [{ name: TABLE, prefix: PREFIX }] },
    countRequests: false,
  });
  const { landingBucket, manifestBucket, ledgerTable } = h.resources;
  const bronze = typeof shape.bronze === 'function' ? shape.bronze(landingBucket) : shape.bronze;
  const config = { tables: [{ name: TABLE, prefix: PREFIX, bronze }] };
  const runtime = sinkRuntimeFromEnv(
    {
      [ENV.awsEndpoint]: target.endpoint,
      AWS_REGION: target.region,
      // The default sink's environment, through the construct's writer; its queue is never called (the
      // nudger is replaced below).
      ...functionEnv('sink', { manifestBucket, ledgerTable, config }),
    },
    { log: silentLog, metrics: new MemoryMetrics(), nudger: { nudge: async () => {} } },
  );
  const sink = new SinkTable({ ...runtime, ...shape.sink });
  const { bucket, prefix } = bronzeLocation(TABLE, sink.bronzeOf(TABLE), manifestBucket);
  const delta = new S3DeltaStore(clients.s3, bucket, prefix);
  const log: LogEntry[] = [];
  const committedAt: string[] = [];
  const table: WrittenTable = {
    shape,
    clients,
    landingBucket,
    uri: `s3://${bucket}/${prefix}`,
    bucket,
    prefix,
    sourceFile: (key) => `s3://${landingBucket}/${PREFIX}${key}`,
    deleteLanding: async (key) => {
      await clients.s3.send(new DeleteObjectCommand({ Bucket: landingBucket, Key: `${PREFIX}${key}` }));
    },
    commit: async (version) => {
      const object = await clients.s3.send(
        new GetObjectCommand({ Bucket: bucket, Key: `${prefix}/${logKey(version)}` }),
      );
      const text = (await object.Body?.transformToString()) ?? '';
      return text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, Record<string, unknown>>);
    },
    landingKeys: () => listKeys(clients, landingBucket, ''),
    symlinkManifests: async () => {
      const root = `${prefix}/${SYMLINK_MANIFEST_DIR}/`;
      const manifests: Record<string, string[]> = {};
      for (const key of await listKeys(clients, bucket, root)) {
        const object = await clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        const text = (await object.Body?.transformToString()) ?? '';
        manifests[key.slice(root.length).replace(/manifest$/, '')] = text
          .split('\n')
          .filter(Boolean)
          .map((line) => line.replace(/^s3a:\/\//, 's3://'))
          .sort();
      }
      return manifests;
    },
    log,
    ingestDate: (index) => {
      const at = committedAt[index];
      if (!at) throw new Error(`shape ${shape.name} has no manifest version ${index + 1}`);
      return at.slice(0, 10);
    },
    commitAsOther: async (info, ...actions) => {
      const commitInfo = { timestamp: Date.now(), ...info };
      const body = `${[{ commitInfo }, ...actions].map((a) => JSON.stringify(a)).join('\n')}\n`;
      if ((await delta.putCommitIfAbsent(log.length, body)) !== 'created')
        throw new Error(`shape ${shape.name}: Delta version ${log.length} was taken`);
      log.push({ kind: 'other', ...info });
    },
    metaData: async () => {
      const { metaData } = (await loadSnapshot(delta)).state;
      if (!metaData) throw new Error(`shape ${shape.name}: no table yet`);
      return metaData;
    },
    lastCheckpoint: async () => {
      const bytes = await delta.getLogFile(LAST_CHECKPOINT);
      return bytes && (JSON.parse(new TextDecoder().decode(bytes)) as { version: number }).version;
    },
  };
  for (const [index, spec] of shape.versions.entries()) {
    for (const [key, body] of Object.entries(spec.files))
      await clients.s3.send(
        new PutObjectCommand({
          Bucket: landingBucket,
          Key: `${PREFIX}${key}`,
          Body: typeof body === 'function' ? body() : body,
        }),
      );
    await h.runUntilQuiet();
    const manifests = await h.store.listManifestVersions(TABLE);
    if (manifests.length !== index + 1)
      throw new Error(
        `shape ${shape.name}: version ${index + 1} landed as ${manifests.length - index} manifest versions; keep a version's files to one batch (at most 10)`,
      );
    committedAt.push((await h.store.getManifest(TABLE, index + 1))?.committedAt ?? '');
    await spec.beforeSink?.(table);
    const outcome = await sink.catchUp(TABLE, Number.POSITIVE_INFINITY);
    for (const version of outcome.written) {
      if (version !== log.length)
        throw new Error(`shape ${shape.name}: the sink wrote Delta version ${version}, not ${log.length}`);
      log.push(await sinkEntry(table, h.store, version));
    }
    const last = log.at(-1);
    if (outcome.versions.join() !== String(index + 1) || last?.kind !== 'sink' || last.index !== index)
      throw new Error(
        `shape ${shape.name}: the sink wrote manifest versions [${outcome.versions}] in Delta versions [${outcome.written}], not ${index + 1}`,
      );
    await afterVersion?.(table, index);
  }
  await shape.written?.(table);
  return table;
}

/** A commit of the sink's as a log entry: the landing files it covers, from its `commitInfo.inlet`. */
async function sinkEntry(
  table: WrittenTable,
  store: Pick<PipelineHarness['store'], 'getManifest'>,
  version: number,
): Promise<LogEntry> {
  const info = (await table.commit(version)).find((a) => a.commitInfo)?.commitInfo;
  const inlet = info?.inlet as
    | { manifestVersion: number; sourceFiles?: { from: number; to: number } }
    | undefined;
  if (!inlet) throw new Error(`Delta version ${version} is not the sink's`);
  const manifest = await store.getManifest(TABLE, inlet.manifestVersion);
  if (!manifest) throw new Error(`no manifest version ${inlet.manifestVersion}`);
  const { from, to } = inlet.sourceFiles ?? { from: 0, to: manifest.files.length };
  const files = manifest.files.slice(from, to).map((f) => f.key.slice(PREFIX.length));
  return { kind: 'sink', index: inlet.manifestVersion - 1, files };
}

/** Every key under `prefix` in `bucket`. */
export async function listKeys(clients: AwsClients, bucket: string, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await clients.s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    keys.push(...(page.Contents ?? []).map((o) => o.Key ?? ''));
    token = page.NextContinuationToken;
  } while (token);
  return keys;
}

/**
 * A byte copy of the table under `<prefix>_cleaned` without the commits and checkpoints before
 * `checkpoint`: what a reader sees after Delta's log cleanup (PROTOCOL.md "Metadata Cleanup": the log
 * files before the newest checkpoint past the retention go), that checkpoint its only start.
 */
export async function copyWithoutLogBefore(table: WrittenTable, checkpoint: number): Promise<string> {
  const { s3 } = table.clients;
  const target = `${table.prefix}_cleaned`;
  const dropped = new Set(
    Array.from({ length: checkpoint }, (_, v) => [
      `${table.prefix}/${logKey(v)}`,
      `${table.prefix}/${logKey(v).replace(/\.json$/, '.checkpoint.parquet')}`,
    ]).flat(),
  );
  for (const key of await listKeys(table.clients, table.bucket, `${table.prefix}/`)) {
    if (dropped.has(key)) continue;
    await s3.send(
      new CopyObjectCommand({
        Bucket: table.bucket,
        Key: `${target}${key.slice(table.prefix.length)}`,
        CopySource: `${table.bucket}/${encodeURIComponent(key).replaceAll('%2F', '/')}`,
      }),
    );
  }
  return `s3://${table.bucket}/${target}`;
}
