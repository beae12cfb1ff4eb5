import type { Manifest } from '../manifest.ts';
import type { ObjectRef } from '../model.ts';
import type { BronzeConfig } from './config.ts';
import { buildCommit, deltaVersionOf, parseCommit } from './delta-log.ts';
import { DeltaCommitConflictError, NewColumnsError } from './errors.ts';
import { corruptRow, RecordFitter } from './fit-record.ts';
import { type DataFile, ParquetSplitter } from './parquet-file.ts';
import { parquetRecords } from './parquet-records.ts';
import type { DeltaStore, SourceObjects } from './ports.ts';
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
}

const sourceUrl = (ref: ObjectRef) => `s3://${ref.bucket}/${ref.key}`;

/** A landing file's records, or undefined when it no longer exists. */
async function openRecords(
  sources: SourceObjects,
  format: BronzeConfig['format'],
  ref: ObjectRef,
): Promise<AsyncIterable<SourceRecord> | undefined> {
  if (format === 'parquet') {
    const file = await sources.openRandom(ref);
    return file && parquetRecords(file);
  }
  const body = await sources.open(ref);
  return body && readRecords(format, body);
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
  const missing: string[] = [];
  for (const ref of manifest.files) {
    const records = await openRecords(deps.sources, config.format, ref);
    if (!records) {
      missing.push(sourceUrl(ref));
      continue;
    }
    for await (const record of records) {
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
  const skipped = new Set(missing);
  for (const ref of manifest.files) {
    if (skipped.has(sourceUrl(ref))) continue;
    const records = await openRecords(deps.sources, config.format, ref);
    // Deleted between the passes: its rows were never written, so the version stays consistent.
    if (!records) {
      missing.push(sourceUrl(ref));
      continue;
    }
    const file = sourceUrl(ref);
    for await (const record of records) {
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
    missingSources: missing,
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
  };
}
