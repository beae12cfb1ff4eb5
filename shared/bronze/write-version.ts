import type { Manifest } from '../ingestion/manifest.ts';
import type { ObjectRef } from '../ingestion/model.ts';
import { type BronzeConfig, INGEST_DATE_COLUMN, partitionColumnsOf } from './config.ts';
import { buildCommit } from './delta-log.ts';
import { NewColumnsError } from './errors.ts';
import { corruptRow, RecordFitter } from './fit-record.ts';
import { hintTypes } from './hint-types.ts';
import { fetchLanding, firstPass, type HoldBudget, type LandingFile, secondPass } from './landing-reads.ts';
import type { DataFile } from './parquet-file.ts';
import { PartitionedWriter } from './partitioned-writer.ts';
import type { DeltaStore, MissingReason, ReadIdentity, SinkPosition, SourceObjects } from './ports.ts';
import { readAhead } from './read-ahead.ts';
import { decideSchema, type TableSchema } from './schema.ts';
import { SchemaObserver } from './schema-observer.ts';
import { protocolChange } from './table-features.ts';
import { headSchema, type TableHead } from './table-head.ts';
import { ENABLE_TYPE_WIDENING, WideningObserver, widenSchema } from './type-widening.ts';
import { sourceUrl } from './version-reads.ts';

/** How much of a manifest version one Delta commit (a part) covers, and how it is read. */
export interface PartLimits {
  /** Landing files per part. */
  readonly maxFiles: number;
  /**
   * Their bytes by the manifest's sizes: a part's files are held in memory between its two passes, so this
   * bounds memory. A file bigger than this is a part of its own, read twice instead of held.
   */
  readonly maxBytes: number;
  /** Landing reads in flight at once. */
  readonly concurrency: number;
}

/**
 * 20,000 files is the committer's own default cap on a version (so a default version of small files is one
 * commit), 64 MiB what a 512 MB function holds beside a data file being built; 16 reads at S3's tens of
 * milliseconds make 20,000 small files about 30 s of waiting.
 */
export const DEFAULT_PART_LIMITS: PartLimits = {
  maxFiles: 20_000,
  maxBytes: 64 * 1024 * 1024,
  concurrency: 16,
};

/** Files `[from, to)` of a manifest version. */
export interface FileRange {
  readonly from: number;
  readonly to: number;
}

/**
 * The part starting at file `from`: as many files as fit `limits` (at least one). A function of the
 * manifest, the position and the limits, so every run (and every racing sink) plans the same part.
 */
export function planPart(manifest: Manifest, from: number, limits: PartLimits): FileRange {
  let to = from;
  let bytes = 0;
  while (to < manifest.files.length && to - from < limits.maxFiles) {
    const size = manifest.files[to]?.size ?? 0;
    if (to > from && bytes + size > limits.maxBytes) break;
    bytes += size;
    to += 1;
  }
  return { from, to };
}

/** The invocation's time ran out inside a part: its data files are orphans, nothing was committed. */
export class OutOfTimeError extends Error {
  constructor() {
    super('out of time inside a part of a version');
    this.name = 'OutOfTimeError';
  }
}

export interface WritePartInput {
  readonly table: string;
  /** `s3://bucket/prefix`, for a new table's id. */
  readonly location: string;
  readonly config: BronzeConfig;
  readonly manifest: Manifest;
  readonly files: FileRange;
  /** The table before this part: its schema and metaData. */
  readonly head: TableHead;
  /** Unique per attempt: in every data file's name. */
  readonly attempt: string;
  readonly limits: PartLimits;
  /** epoch ms: past it the part is abandoned (`OutOfTimeError`) rather than killed by Lambda mid-way. */
  readonly finishBy: number;
  /** Which write of each landing key to read: `write` for allowOverwrites tables. Default `path`. */
  readonly identity?: ReadIdentity;
  /** Rows per row group; tests make it small to exercise splitting. */
  readonly rowGroupRows?: number;
}

/** A part whose data files are written and whose commit is ready to put. */
export interface PreparedPart {
  readonly body: string;
  /** Where the table stands once it is committed. */
  readonly end: SinkPosition;
  readonly rows: number;
  readonly rescued: number;
  readonly dataFiles: number;
  readonly bytes: number;
  /** Landing files that could not be read, and why (the commit records their URLs). */
  readonly missing: ReadonlyArray<{ readonly url: string; readonly reason: MissingReason }>;
}

/**
 * Files `[from, to)` of a manifest version as Parquet data files and the commit that adds them
 * (docs/bronze.md, "Writing a version"). Two passes: the first infers the columns (reading the files in
 * parallel and holding the small ones), the second writes rows under the schema decided in between. Nothing
 * is committed here; every data file has a name of its own, so an abandoned attempt leaves only orphans.
 */
export async function writePart(
  deps: { readonly sources: SourceObjects; readonly delta: DeltaStore; readonly now: () => number },
  input: WritePartInput,
): Promise<PreparedPart> {
  const { manifest, config, files } = input;
  const inTime = () => {
    if (deps.now() > input.finishBy) throw new OutOfTimeError();
  };
  // Also inside a file: a big one streamed for minutes must not run into the Lambda timeout.
  let seen = 0;
  const everySoOften = () => {
    seen += 1;
    if (seen % 4096 === 0) inTime();
  };
  const refs = manifest.files.slice(files.from, files.to);
  const budget: HoldBudget = { bytes: input.limits.maxBytes };
  const observer = new SchemaObserver(config.format, config.nested);
  const partitionBy = input.head.metaData?.partitionColumns ?? partitionColumnsOf(config);
  const current = headSchema(input.head);
  const widening = wideningObserver(config, input.head, current, partitionBy);
  const identity = input.identity ?? 'path';
  // The write each file's first pass read, so the second reads exactly it (a rewrite between the passes
  // fails the part instead of mixing writes); and the files read at another write than the manifest names,
  // which the commit records so cleanSource leaves them (shared/bronze/version-reads.ts).
  const read: Array<{ readonly file: LandingFile; readonly pinned: ObjectRef }> = [];
  const missing = new Map<string, MissingReason>();
  const rewritten: string[] = [];
  const fetches = readAhead(
    refs,
    (ref) => fetchLanding(deps.sources, config.format, ref, identity, budget),
    input.limits.concurrency,
  );
  for await (const file of fetches) {
    inTime();
    const first = await firstPass(deps.sources, config.format, file, identity);
    if (first.kind === 'missing') {
      missing.set(sourceUrl(file.ref), first.reason);
      continue;
    }
    read.push({ file, pinned: first.pinned });
    if (!first.asNamed) rewritten.push(sourceUrl(file.ref));
    for await (const record of first.records) {
      everySoOften();
      if (record.kind === 'row') {
        observer.observe(record.values);
        widening?.observe(record.values, record.types);
      } else if (record.kind === 'columns') observer.declare(record.columns);
    }
  }
  // A source key named like the ingestion date column the sink adds is rescued, never a column of its own.
  const observed = partitionBy.includes(INGEST_DATE_COLUMN)
    ? observer.columns().filter((c) => c.name.toLowerCase() !== INGEST_DATE_COLUMN)
    : observer.columns();
  const decided = decideSchema(current, observed, hintTypes(config.schemaHints), config.evolution);
  if (decided.kind === 'fail') throw new NewColumnsError(input.table, manifest.version, decided.newColumns);
  const widened = widening?.widened();
  const decision =
    widened && widened.size > 0
      ? { schema: widenSchema(decided.schema, widened), changed: true }
      : { schema: decided.schema, changed: decided.changed };

  const written: Array<Omit<DataFile, 'bytes'> & { size: number }> = [];
  const splitter = new PartitionedWriter({
    schema: decision.schema,
    partitionBy,
    committedAt: manifest.committedAt,
    manifestVersion: manifest.version,
    attempt: input.attempt,
    maxFileBytes: config.maxFileBytes,
    rowGroupRows: input.rowGroupRows,
    onFile: async (file) => {
      inTime();
      await deps.delta.putDataFile(file.path, file.bytes);
      const { bytes, ...rest } = file;
      written.push({ ...rest, size: bytes.byteLength });
    },
  });
  const fitter = new RecordFitter(decision.schema, config.evolution, config.format, partitionBy);
  for (const { file, pinned } of read) {
    const url = sourceUrl(file.ref);
    inTime();
    for await (const record of await secondPass(deps.sources, config.format, file, pinned)) {
      everySoOften();
      if (record.kind === 'columns') continue;
      await splitter.add(
        record.kind === 'row'
          ? fitter.fit(record.values, record.types, url, manifest.version)
          : corruptRow(record.raw, record.reason, decision.schema, url, manifest.version),
      );
    }
  }
  await splitter.close();

  const complete = files.to === manifest.files.length;
  const body = buildCommit({
    table: input.table,
    location: input.location,
    manifestVersion: manifest.version,
    batchIds: manifest.batchIds,
    sourceFiles: { ...files, of: manifest.files.length },
    previous: input.head.metaData,
    schema: decision.schema,
    schemaChanged: decision.changed,
    files: written,
    missingSources: [...missing.keys()],
    rewrittenSources: rewritten,
    timestamp: Date.parse(manifest.committedAt),
    protocol: protocolChange(input.head.protocol, decision.schema),
    ...(widened && widened.size > 0 ? { configuration: { [ENABLE_TYPE_WIDENING]: 'true' } } : {}),
    partitionBy,
  });
  return {
    body,
    end: complete
      ? { manifestVersion: manifest.version, filesDone: 0 }
      : { manifestVersion: manifest.version - 1, filesDone: files.to },
    rows: written.reduce((sum, f) => sum + f.rows, 0),
    rescued: written.reduce((sum, f) => sum + f.rescued, 0),
    dataFiles: written.length,
    bytes: written.reduce((sum, f) => sum + f.size, 0),
    missing: [...missing].map(([url, reason]) => ({ url, reason })),
  };
}

/**
 * What watches pass 1 for values that need a column widened, or undefined when this table does not widen:
 * its config leaves `typeWidening` off, it has no schema yet, or another writer set
 * `delta.enableTypeWidening` to something other than true, in any case as Delta parses it (PROTOCOL.md
 * "Type Widening": "Writers must reject widening type changes when this property isn't set to `true`";
 * absent, this commit sets it).
 * Partition columns never widen: their values are directory names of the type they were first written as.
 */
function wideningObserver(
  config: BronzeConfig,
  head: TableHead,
  current: TableSchema | undefined,
  partitionBy: readonly string[],
): WideningObserver | undefined {
  const property = head.metaData?.configuration?.[ENABLE_TYPE_WIDENING];
  const refused = property !== undefined && property.toLowerCase() !== 'true';
  if (!config.typeWidening || !current || refused) return undefined;
  return new WideningObserver(
    current.filter((c) => !partitionBy.includes(c.name)),
    config.format === 'csv',
  );
}
