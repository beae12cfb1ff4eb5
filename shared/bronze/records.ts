import { CsvParser, type CsvRow } from '../kernel/csv.ts';
import type { BronzeType } from './delta-types.ts';
import { parseJson } from './json-parse.ts';
import type { Column } from './schema.ts';
import { untypedJson } from './values.ts';

/**
 * Streaming record readers: a landing file's bytes in, one record (or one unparseable piece) at a time out.
 * Memory is bounded by the longest record, and that is capped: a line past MAX_RECORD_CHARS is cut and
 * rescued, so one newline-free gigabyte cannot take the function down.
 */

/** A record read from a file: its columns, or the raw text that could not be parsed and why. */
export type SourceRecord =
  | {
      readonly kind: 'row';
      readonly values: Readonly<Record<string, unknown>>;
      /** A self-describing file's declared types of its columns (the same map for every row of a file). */
      readonly types?: ReadonlyMap<string, BronzeType>;
    }
  | { readonly kind: 'corrupt'; readonly raw: string; readonly reason: string }
  /** A self-describing file (Parquet) declares its columns and their types before its rows. */
  | { readonly kind: 'columns'; readonly columns: readonly Column[] };

/** Formats read as a stream of text; Parquet is read by ranges (parquet-records.ts). */
export type TextFormat = 'json' | 'jsonl' | 'csv';

/** The longest record read whole, in characters (UTF-16 code units, what a string's length counts). */
export const MAX_RECORD_CHARS = 8 * 1024 * 1024;
/** A `json` file that is one document (an array of records) is parsed whole, so only up to this size. */
export const MAX_DOCUMENT_BYTES = 64 * 1024 * 1024;
/** How much of a cut or unparseable record `_rescued_data` keeps. */
const RAW_KEEP = 64 * 1024;

const clip = (raw: string) => (raw.length > RAW_KEEP ? raw.slice(0, RAW_KEEP) : raw);

/** Text lines (without `\n` / `\r\n`), decoding UTF-8 across chunk boundaries. */
async function* lines(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<{ text: string; cut: boolean }> {
  const decoder = new TextDecoder('utf-8');
  let buffer = '';
  // Inside a line that was cut: its head was reported, the rest is dropped up to the next newline.
  let cutting = false;
  const strip = (text: string) => (text.endsWith('\r') ? text.slice(0, -1) : text);
  function* drain(final: boolean): Generator<{ text: string; cut: boolean }> {
    for (;;) {
      const newline = buffer.indexOf('\n');
      const end = newline < 0 ? buffer.length : newline;
      if (!cutting && end > MAX_RECORD_CHARS) {
        yield { text: buffer.slice(0, RAW_KEEP), cut: true };
        cutting = true;
      }
      if (newline < 0) {
        if (cutting) buffer = '';
        else if (final && buffer.length > 0) yield { text: strip(buffer), cut: false };
        return;
      }
      if (!cutting) yield { text: strip(buffer.slice(0, newline)), cut: false };
      cutting = false;
      buffer = buffer.slice(newline + 1);
    }
  }
  for await (const chunk of chunks) {
    buffer += decoder.decode(chunk, { stream: true });
    yield* drain(false);
  }
  buffer += decoder.decode();
  yield* drain(true);
}

/** A JSON object: not an array, and not a number the lossless parser wraps (`1.0`, `1e400` on their own). */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** JSON Lines; a `json` file whose first byte is `[` is one document, an array of records. */
async function* jsonRecords(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<SourceRecord> {
  let first = true;
  const iterator = lines(chunks)[Symbol.asyncIterator]();
  for (;;) {
    const next = await iterator.next();
    if (next.done) return;
    const { text, cut } = next.value;
    if (cut) {
      // The rest of a cut line is dropped by `lines`; its head is rescued with the reason.
      yield { kind: 'corrupt', raw: text, reason: `record longer than ${MAX_RECORD_CHARS} characters` };
      first = false;
      continue;
    }
    const trimmed = text.trim();
    if (first && trimmed.startsWith('[')) {
      yield* jsonDocument(text, iterator);
      return;
    }
    first = false;
    if (trimmed === '') continue;
    let parsed: unknown;
    try {
      parsed = parseJson(trimmed);
    } catch (error) {
      yield { kind: 'corrupt', raw: clip(text), reason: `not JSON: ${(error as Error).message}` };
      continue;
    }
    if (isPlainObject(parsed)) yield { kind: 'row', values: parsed };
    else yield { kind: 'corrupt', raw: clip(text), reason: 'a JSON record must be an object' };
  }
}

async function* jsonDocument(
  head: string,
  rest: AsyncIterator<{ text: string; cut: boolean }>,
): AsyncGenerator<SourceRecord> {
  let text = head;
  for (;;) {
    const next = await rest.next();
    if (next.done) break;
    text += `\n${next.value.text}`;
    if (next.value.cut || text.length > MAX_DOCUMENT_BYTES) {
      yield {
        kind: 'corrupt',
        raw: clip(text),
        reason: `a JSON array document over ${MAX_DOCUMENT_BYTES} bytes; write JSON Lines instead`,
      };
      return;
    }
  }
  let parsed: unknown;
  try {
    parsed = parseJson(text);
  } catch (error) {
    yield { kind: 'corrupt', raw: clip(text), reason: `not JSON: ${(error as Error).message}` };
    return;
  }
  for (const item of parsed as unknown[]) {
    if (isPlainObject(item)) yield { kind: 'row', values: item };
    else yield { kind: 'corrupt', raw: clip(untypedJson(item)), reason: 'a JSON record must be an object' };
  }
}

/**
 * CSV with a header line (shared/kernel/csv.ts: RFC 4180, quoted fields may hold commas, `""` and line
 * breaks). A row whose field count differs from the header's, or longer than MAX_RECORD_CHARS, is rescued
 * whole; an empty line is skipped. Every value is a string; types come from inference.
 */
async function* csvRecords(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<SourceRecord> {
  let header: string[] | undefined;
  const csv = new CsvParser({ maxRowChars: MAX_RECORD_CHARS, rawKeep: RAW_KEEP });
  const decoder = new TextDecoder('utf-8');

  function* record(row: CsvRow): Generator<SourceRecord> {
    if (row.tooLong) {
      yield {
        kind: 'corrupt',
        raw: clip(row.raw),
        reason: `record longer than ${MAX_RECORD_CHARS} characters`,
      };
      return;
    }
    const { fields } = row;
    if (fields.length === 1 && fields[0] === '') return;
    if (!header) {
      // A repeated header name would overwrite its twin's values: the second becomes `name_2`, and so on.
      const seen = new Map<string, number>();
      header = fields.map((raw) => {
        const name = raw.trim();
        const n = (seen.get(name) ?? 0) + 1;
        seen.set(name, n);
        return n === 1 ? name : `${name}_${n}`;
      });
      return;
    }
    if (fields.length !== header.length) {
      yield {
        kind: 'corrupt',
        raw: clip(row.raw),
        reason: `${fields.length} fields where the header has ${header.length}`,
      };
      return;
    }
    const values: Record<string, unknown> = {};
    header.forEach((name, i) => {
      values[name] = fields[i];
    });
    yield { kind: 'row', values };
  }

  for await (const chunk of chunks)
    for (const row of csv.write(decoder.decode(chunk, { stream: true }))) yield* record(row);
  for (const row of csv.write(decoder.decode())) yield* record(row);
  const end = csv.end();
  if (end.kind === 'unterminated')
    yield { kind: 'corrupt', raw: clip(end.raw), reason: 'unterminated quoted field at end of file' };
  else if (end.row) yield* record(end.row);
}

/** The records of one landing file, streamed. */
export function readRecords(
  format: TextFormat,
  chunks: AsyncIterable<Uint8Array>,
): AsyncIterable<SourceRecord> {
  return format === 'csv' ? csvRecords(chunks) : jsonRecords(chunks);
}
