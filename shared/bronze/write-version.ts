import { InletError } from '../errors.ts';
import type { Manifest } from '../manifest.ts';
import type { ObjectRef } from '../model.ts';
import type { BronzeConfig } from './config.ts';
import { buildCommit, deltaVersionOf, parseCommit } from './delta-log.ts';
import { DeltaCommitConflictError, NewColumnsError } from './errors.ts';
import { corruptRow, RecordFitter } from './fit-record.ts';
import { type DataFile, ParquetSplitter } from './parquet-file.ts';
import { parquetRecords } from './parquet-records.ts';
import type { DeltaStore, MissingReason, ReadIdentity, SourceObjects, SourceRead } from './ports.ts';
import { readRecords, type SourceRecord } from './records.ts';
import { decideSchema, type TableSchema } from './schema.ts';
import { SchemaObserver } from './schema-observer.ts';
import { protocolChange } from './table-features.ts';

export interface WriteVersionInput {
  readonly table: string;
  /** `s3://bucket/prefix`, for the table id and logs. */
  readonly location: string;
  readonly config: BronzeConfig;
  readonly manifest: Manifest;
  /** The table's schema before this version; undefined before the first. */
  readonly schema: TableSchema | undefined;
  /** Which write of each landing key to read: `write` for allowOverwrites tables. Default `path`. */
  readonly identity?: ReadIdentity;
  /** Rows per row group; tests make it small to exercise splitting. */
  readonly rowGroupRows?: number;
}

export interface WriteVersionResult {
  readonly deltaVersion: number;
  readonly result: 'committed' | 'already-committed';
  readonly schema: TableSchema;
  readonly rows: number;
  readonly rescued: number;
  readonly files: number;
  /** Bytes of the data files the commit adds. */
  readonly bytes: number;
  /**
   * Landing files this call could not read, and why (`MissingReason`); the commit records their URLs. Empty
   * for a commit found already written: the run that wrote it reported them.
   */
  readonly missing: ReadonlyArray<{ readonly url: string; readonly reason: MissingReason }>;
}

const sourceUrl = (ref: ObjectRef) => `s3://${ref.bucket}/${ref.key}`;

/** A landing file's records (or why it was not read), reading the write `identity` names. */
async function openRecords(
  sources: SourceObjects,
  format: BronzeConfig['format'],
  ref: ObjectRef,
  identity: ReadIdentity,
): Promise<SourceRead<AsyncIterable<SourceRecord>>> {
  if (format === 'parquet') {
    const file = await sources.openRandom(ref, identity);
    return file.kind === 'found' ? { ...file, body: parquetRecords(file.body) } : file;
  }
  const body = await sources.open(ref, identity);
  return body.kind === 'found' ? { ...body, body: readRecords(format, body.body) } : body;
}

/**
 * One manifest version -> one Delta commit (docs/bronze.md, "Writing a version"). Two passes over the
 * version's files, both streamed: the first infers the columns, the second writes rows under the schema
 * decided in between. Every step is safe to repeat: data file names are per version, the commit is a
 * conditional put, and a commit already there (ours) is only read.
 */
export async function writeVersion(
  deps: { readonly sources: SourceObjects; readonly delta: DeltaStore },
  input: WriteVersionInput,
): Promise<WriteVersionResult> {
  const { manifest, config } = input;
  const deltaVersion = deltaVersionOf(manifest.version);
  const existing = await deps.delta.getCommit(deltaVersion);
  if (existing !== undefined) return fromExisting(input, deltaVersion, existing);

  const observer = new SchemaObserver(config.format);
  const missing = new Map<string, MissingReason>();
  // Pass 2 reads exactly the write pass 1 read (by its version, else its ETag), and the commit names the
  // files read at another write than the manifest's, which cleanSource then leaves in place.
  const pinned = new Map<ObjectRef, ObjectRef>();
  const rewritten: string[] = [];
  for (const ref of manifest.files) {
    const read = await openRecords(deps.sources, config.format, ref, input.identity ?? 'path');
    if (read.kind === 'missing') {
      missing.set(sourceUrl(ref), read.reason);
      continue;
    }
    pinned.set(ref, read.pinned);
    if (!read.asNamed) rewritten.push(sourceUrl(ref));
    for await (const record of read.body) {
      if (record.kind === 'row') observer.observe(record.values);
      else if (record.kind === 'columns') observer.declare(record.columns);
    }
  }
  const decision = decideSchema(input.schema, observer.columns(), config.schemaHints, config.evolution);
  if (decision.kind === 'fail') throw new NewColumnsError(input.table, manifest.version, decision.newColumns);

  const written: Array<Omit<DataFile, 'bytes'> & { size: number }> = [];
  const splitter = new ParquetSplitter({
    schema: decision.schema,
    manifestVersion: manifest.version,
    maxFileBytes: config.maxFileBytes,
    rowGroupRows: input.rowGroupRows,
    onFile: async (file) => {
      await deps.delta.putDataFile(file.path, file.bytes);
      written.push({ path: file.path, rows: file.rows, rescued: file.rescued, size: file.bytes.byteLength });
    },
  });
  const fitter = new RecordFitter(decision.schema, config.evolution, config.format);
  for (const ref of manifest.files) {
    const again = pinned.get(ref);
    if (!again) continue;
    const read = await openRecords(deps.sources, config.format, again, 'write');
    // Rewritten or deleted between the passes: the schema was decided on other bytes. Retried whole.
    if (read.kind === 'missing')
      throw new InletError(
        `landing file ${sourceUrl(ref)} changed while version ${manifest.version} was written (${read.reason}); retried`,
        { retryable: true },
      );
    const file = sourceUrl(ref);
    for await (const record of read.body) {
      if (record.kind === 'columns') continue;
      await splitter.add(
        record.kind === 'row'
          ? fitter.fit(record.values, record.types, file, manifest.version)
          : corruptRow(record.raw, record.reason, decision.schema, file, manifest.version),
      );
    }
  }
  await splitter.close();

  const body = buildCommit({
    table: input.table,
    location: input.location,
    manifestVersion: manifest.version,
    batchIds: manifest.batchIds,
    schema: decision.schema,
    schemaChanged: decision.changed,
    files: written,
    missingSources: [...missing.keys()],
    rewrittenSources: rewritten,
    timestamp: Date.parse(manifest.committedAt),
    protocol: protocolChange(input.schema, decision.schema),
  });
  if ((await deps.delta.putCommitIfAbsent(deltaVersion, body)) === 'exists') {
    // Someone committed this version between our check and our put: done if it was a replay of ours.
    const found = await deps.delta.getCommit(deltaVersion);
    return fromExisting(input, deltaVersion, found ?? '');
  }
  return {
    deltaVersion,
    result: 'committed',
    schema: decision.schema,
    rows: written.reduce((sum, f) => sum + f.rows, 0),
    rescued: written.reduce((sum, f) => sum + f.rescued, 0),
    files: written.length,
    bytes: written.reduce((sum, f) => sum + f.size, 0),
    missing: [...missing].map(([url, reason]) => ({ url, reason })),
  };
}

function fromExisting(input: WriteVersionInput, deltaVersion: number, text: string): WriteVersionResult {
  const summary = parseCommit(input.table, text);
  if (summary.manifestVersion !== input.manifest.version)
    throw new DeltaCommitConflictError(input.table, deltaVersion, summary.manifestVersion);
  const schema = summary.schema ?? input.schema;
  if (!schema) throw new DeltaCommitConflictError(input.table, deltaVersion, summary.manifestVersion);
  return {
    deltaVersion,
    result: 'already-committed',
    schema,
    rows: summary.rows,
    rescued: summary.rescued,
    files: summary.files,
    bytes: summary.bytes,
    missing: [],
  };
}
