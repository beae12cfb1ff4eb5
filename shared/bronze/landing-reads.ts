import type { ObjectRef } from '../ingestion/model.ts';
import { InletError } from '../kernel/errors.ts';
import { bytesObject } from './checkpoint.ts';
import type { BronzeConfig } from './config.ts';
import { parquetRecords } from './parquet-records.ts';
import type { MissingReason, RandomAccessObject, ReadIdentity, SourceObjects, SourceRead } from './ports.ts';
import { readRecords, type SourceRecord } from './records.ts';
import { sourceUrl } from './version-reads.ts';

/**
 * The sink's only use of the `SourceObjects` port: a landing file fetched for a part of a version. A file
 * the manifest says is small is read once and held for both passes (one GET, not two); a big one is opened
 * again for each pass (streamed, never held), the second time at exactly the write the first one read
 * (`pinned`); a file that cannot be read is missing, with the reason. Which write of the key is read is the
 * table's identity (docs/bronze.md, "Which write the sink reads").
 */
export type LandingFile =
  | { readonly kind: 'missing'; readonly ref: ObjectRef; readonly reason: MissingReason }
  | { readonly kind: 'held'; readonly ref: ObjectRef; readonly bytes: Uint8Array; readonly asNamed: boolean }
  | {
      readonly kind: 'streamed';
      readonly ref: ObjectRef;
      /** The write a first read already found, when holding it was given up part way. */
      readonly pinned?: { readonly ref: ObjectRef; readonly asNamed: boolean };
    };

/** Bytes still free for holding files in memory; shared by the fetches of one part. */
export interface HoldBudget {
  bytes: number;
}

type Format = BronzeConfig['format'];

const open = (sources: SourceObjects, format: Format, ref: ObjectRef, identity: ReadIdentity) =>
  format === 'parquet' ? sources.openRandom(ref, identity) : sources.open(ref, identity);

/**
 * Reads `ref` whole into memory when its manifest size and the budget allow, else leaves it to be streamed.
 * A file bigger than its manifest says (rewritten under path identity) stops being held once it passes
 * the budget, so memory stays bounded whatever the sizes claim.
 */
export async function fetchLanding(
  sources: SourceObjects,
  format: Format,
  ref: ObjectRef,
  identity: ReadIdentity,
  budget: HoldBudget,
): Promise<LandingFile> {
  if (ref.size > budget.bytes) return { kind: 'streamed', ref };
  const read = await open(sources, format, ref, identity);
  if (read.kind === 'missing') return { kind: 'missing', ref, reason: read.reason };
  const pinned = { ref: read.pinned, asNamed: read.asNamed };
  if (format === 'parquet') {
    const file = read.body as RandomAccessObject;
    if (file.byteLength > budget.bytes) return { kind: 'streamed', ref, pinned };
    budget.bytes -= file.byteLength;
    const bytes = new Uint8Array(await file.slice(0, file.byteLength));
    return { kind: 'held', ref, bytes, asNamed: read.asNamed };
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const iterator = (read.body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    size += next.value.byteLength;
    if (size > budget.bytes) {
      await iterator.return?.();
      budget.bytes += size - next.value.byteLength;
      return { kind: 'streamed', ref, pinned };
    }
    chunks.push(next.value);
    budget.bytes -= next.value.byteLength;
  }
  return { kind: 'held', ref, bytes: Buffer.concat(chunks), asNamed: read.asNamed };
}

/** What a pass reads of a fetched file: its records, or why it is missing (first pass only). */
export type LandingRead =
  | {
      readonly kind: 'found';
      readonly records: AsyncIterable<SourceRecord>;
      /** The write read, to read again in the second pass. */
      readonly pinned: ObjectRef;
      /** False when a `path` read found a rewrite of the key, not the write the manifest names. */
      readonly asNamed: boolean;
    }
  | { readonly kind: 'missing'; readonly reason: MissingReason };

function records(format: Format, read: Extract<SourceRead<unknown>, { kind: 'found' }>) {
  return format === 'parquet'
    ? parquetRecords(read.body as RandomAccessObject)
    : readRecords(format, read.body as AsyncIterable<Uint8Array>);
}

function fromBytes(format: Format, bytes: Uint8Array): AsyncIterable<SourceRecord> {
  if (format === 'parquet') return parquetRecords(bytesObject(bytes));
  return readRecords(
    format,
    (async function* () {
      // In slices, as a stream arrives: the readers' memory bound is per chunk, not per file.
      for (let i = 0; i < bytes.byteLength; i += 1 << 20) yield bytes.subarray(i, i + (1 << 20));
    })(),
  );
}

/** The first pass over a fetched file: a streamed one is opened (at the write a fetch found, if any). */
export async function firstPass(
  sources: SourceObjects,
  format: Format,
  file: LandingFile,
  identity: ReadIdentity,
): Promise<LandingRead> {
  if (file.kind === 'missing') return { kind: 'missing', reason: file.reason };
  if (file.kind === 'held')
    return { kind: 'found', records: fromBytes(format, file.bytes), pinned: file.ref, asNamed: file.asNamed };
  const read = file.pinned
    ? await open(sources, format, file.pinned.ref, 'write')
    : await open(sources, format, file.ref, identity);
  if (read.kind === 'missing') {
    // The write a fetch found moments ago is gone: as in the second pass, read the file again from the start.
    if (file.pinned) throw changed(file.ref, read.reason);
    return { kind: 'missing', reason: read.reason };
  }
  return {
    kind: 'found',
    records: records(format, read),
    pinned: read.pinned,
    asNamed: file.pinned ? file.pinned.asNamed : read.asNamed,
  };
}

/**
 * The second pass over a file the first pass read: from memory, or a streamed file again at exactly the
 * write the first pass read. Gone or rewritten between the passes, the part's schema was decided on other
 * bytes: the part fails (retryable) and its next attempt reads the file afresh.
 */
export async function secondPass(
  sources: SourceObjects,
  format: Format,
  file: LandingFile,
  pinned: ObjectRef,
): Promise<AsyncIterable<SourceRecord>> {
  if (file.kind === 'held') return fromBytes(format, file.bytes);
  const read = await open(sources, format, pinned, 'write');
  if (read.kind === 'missing') throw changed(file.ref, read.reason);
  return records(format, read);
}

const changed = (ref: ObjectRef, reason: MissingReason) =>
  new InletError(`landing file ${sourceUrl(ref)} changed while it was written (${reason}); retried`, {
    retryable: true,
  });
