import type { ObjectRef } from '../model.ts';
import { bytesObject } from './checkpoint.ts';
import type { BronzeConfig } from './config.ts';
import { parquetRecords } from './parquet-records.ts';
import type { SourceObjects } from './ports.ts';
import { readRecords, type SourceRecord } from './records.ts';

/**
 * The sink's only use of the `SourceObjects` port: a landing file fetched for a part of a version. A file
 * the manifest says is small is read once and held for both passes (one GET, not two); a big one is opened
 * again for each pass (streamed, never held); a file that cannot be read is missing, with the reason.
 */
export type LandingFile =
  | { readonly kind: 'missing'; readonly ref: ObjectRef; readonly reason: string }
  | { readonly kind: 'held'; readonly ref: ObjectRef; readonly bytes: Uint8Array }
  | { readonly kind: 'streamed'; readonly ref: ObjectRef };

/** What the landing reader says of an object that is not there (the port answers `undefined`). */
const NOT_FOUND = 'the landing object is gone (404): deleted or expired since its event';

/** Bytes still free for holding files in memory; shared by the fetches of one part. */
export interface HoldBudget {
  bytes: number;
}

/**
 * Reads `ref` whole into memory when its manifest size and the budget allow, else leaves it to be streamed.
 * A file bigger than its manifest says (rewritten under path identity) stops being held once it passes
 * the budget, so memory stays bounded whatever the sizes claim.
 */
export async function fetchLanding(
  sources: SourceObjects,
  format: BronzeConfig['format'],
  ref: ObjectRef,
  budget: HoldBudget,
): Promise<LandingFile> {
  if (ref.size > budget.bytes) return { kind: 'streamed', ref };
  if (format === 'parquet') {
    const file = await sources.openRandom(ref);
    if (!file) return { kind: 'missing', ref, reason: NOT_FOUND };
    if (file.byteLength > budget.bytes) return { kind: 'streamed', ref };
    budget.bytes -= file.byteLength;
    return { kind: 'held', ref, bytes: new Uint8Array(await file.slice(0, file.byteLength)) };
  }
  const body = await sources.open(ref);
  if (!body) return { kind: 'missing', ref, reason: NOT_FOUND };
  const chunks: Uint8Array[] = [];
  let size = 0;
  const iterator = body[Symbol.asyncIterator]();
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    size += next.value.byteLength;
    if (size > budget.bytes) {
      await iterator.return?.();
      budget.bytes += size - next.value.byteLength;
      return { kind: 'streamed', ref };
    }
    chunks.push(next.value);
    budget.bytes -= next.value.byteLength;
  }
  return { kind: 'held', ref, bytes: Buffer.concat(chunks) };
}

/** The file's records for one pass; `missing` when a streamed file is gone by now. */
export async function landingRecords(
  sources: SourceObjects,
  format: BronzeConfig['format'],
  file: LandingFile,
): Promise<AsyncIterable<SourceRecord> | { readonly missing: string }> {
  if (file.kind === 'missing') return { missing: file.reason };
  if (file.kind === 'held') {
    if (format === 'parquet') return parquetRecords(bytesObject(file.bytes));
    const { bytes } = file;
    return readRecords(
      format,
      (async function* () {
        // In slices, as a stream arrives: the readers' memory bound is per chunk, not per file.
        for (let i = 0; i < bytes.byteLength; i += 1 << 20) yield bytes.subarray(i, i + (1 << 20));
      })(),
    );
  }
  if (format === 'parquet') {
    const random = await sources.openRandom(file.ref);
    return random ? parquetRecords(random) : { missing: NOT_FOUND };
  }
  const body = await sources.open(file.ref);
  return body ? readRecords(format, body) : { missing: NOT_FOUND };
}
