import { createHash } from 'node:crypto';
import { pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { UnknownOutcomeError } from '../kernel/errors.ts';
import { InventoryReportError } from './inventory-report.ts';

/** A row longer than this is not an inventory row (a key is at most 1,024 bytes): the file is refused. */
const MAX_ROW_BYTES = 1024 * 1024;
const EMPTY = Buffer.alloc(0);
const NEWLINE = 0x0a;

/** The compressed bytes of one data file, as GetObject hands them out, and what the manifest says of them. */
export interface GzipSource {
  /** For messages: s3://bucket/key. */
  readonly name: string;
  readonly body: AsyncIterable<Uint8Array>;
  /** The response's Content-Length: a body that ends short of it was cut in transit. */
  readonly contentLength?: number;
  /** The manifest's MD5checksum of the file (hex): checked once the whole file has been read. */
  readonly md5?: string;
}

/** The body stream failed (the connection, not the bytes): a new GET may well succeed. */
class BodyError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
    this.name = 'BodyError';
  }
}

/**
 * The non-empty lines of a gzip file, streamed: the body flows through gunzip a chunk at a time and only the
 * current chunk and a partial line are held, whatever the file's size (a data file's size has no documented
 * bound). Lines are skipped without being decoded. Reading to the end checks the byte count and the MD5.
 *
 * Errors: a body that fails or ends short of its Content-Length is an `UnknownOutcomeError` (retryable: the
 * next GET may succeed); bytes that are not a complete gzip stream, or a file whose MD5 is not the manifest's,
 * are an `InventoryReportError` (not retryable: S3 serves the same bytes again).
 */
export class GzipLines {
  /** Non-empty lines consumed (skipped or taken). */
  row = 0;
  private readonly chunks: AsyncIterator<Buffer>;
  private readonly gunzip = createGunzip({ chunkSize: 64 * 1024 });
  private readonly hash = createHash('md5');
  private received = 0;
  private buffer: Buffer = EMPTY;
  private at = 0;
  private ended = false;
  private peeked?: Buffer;

  constructor(private readonly source: GzipSource) {
    const self = this;
    async function* compressed() {
      try {
        for await (const chunk of source.body) {
          self.hash.update(chunk);
          self.received += chunk.length;
          yield chunk;
        }
      } catch (error) {
        throw new BodyError(`reading ${source.name} failed: ${(error as Error).message}`, error);
      }
      if (source.contentLength !== undefined && self.received !== source.contentLength)
        throw new BodyError(
          `${source.name} ended after ${self.received} of its ${source.contentLength} bytes`,
        );
    }
    // Errors reach the reader through gunzip's iterator, which pipeline destroys with them.
    pipeline(compressed(), this.gunzip, () => {});
    this.chunks = this.gunzip[Symbol.asyncIterator]();
  }

  /** Skips up to `count` lines without decoding them; how many it skipped (fewer at the end of the file). */
  async skip(count: number): Promise<number> {
    let skipped = 0;
    if (this.peeked && count > 0) {
      this.peeked = undefined;
      skipped++;
    }
    // Lines counted in place (no line made): a resumed step may skip millions of them.
    while (skipped < count) {
      const newline = this.buffer.indexOf(NEWLINE, this.at);
      if (newline < 0) {
        if (this.buffer.length - this.at <= MAX_ROW_BYTES && !this.ended) {
          const next = await this.read();
          if (next !== undefined) {
            this.buffer =
              this.at < this.buffer.length ? Buffer.concat([this.buffer.subarray(this.at), next]) : next;
            this.at = 0;
            continue;
          }
        }
        // The end, or an overlong row: the general path returns the last line or reports the row.
        if ((await this.nextLine()) === undefined) break;
        skipped++;
        continue;
      }
      const empty = newline === this.at || (newline === this.at + 1 && this.buffer[this.at] === 0x0d);
      this.at = newline + 1;
      if (!empty) skipped++;
    }
    this.row += skipped;
    return skipped;
  }

  /** Up to `count` lines, and whether any follow. */
  async take(count: number): Promise<{ lines: string[]; more: boolean }> {
    const lines: string[] = [];
    while (lines.length < count) {
      const line = this.peeked ?? (await this.nextLine());
      this.peeked = undefined;
      if (line === undefined) break;
      lines.push(line.toString('utf8'));
    }
    this.row += lines.length;
    this.peeked = lines.length === count ? await this.nextLine() : undefined;
    return { lines, more: this.peeked !== undefined };
  }

  /** Stops reading: the body's connection is released. */
  close(): void {
    this.gunzip.destroy();
  }

  /** The next non-empty line (without its `\n` or `\r\n`), or undefined at the end of the file. */
  private async nextLine(): Promise<Buffer | undefined> {
    for (;;) {
      const newline = this.buffer.indexOf(NEWLINE, this.at);
      if (newline >= 0) {
        const end = newline > this.at && this.buffer[newline - 1] === 0x0d ? newline - 1 : newline;
        const line = this.buffer.subarray(this.at, end);
        this.at = newline + 1;
        if (line.length > 0) return line;
        continue;
      }
      const rest = this.buffer.subarray(this.at);
      if (rest.length > MAX_ROW_BYTES)
        throw new InventoryReportError(
          `${this.source.name}: row ${this.row + 1} is longer than ${MAX_ROW_BYTES} bytes: not an S3 Inventory CSV file`,
        );
      const next = this.ended ? undefined : await this.read();
      if (next === undefined) {
        this.buffer = EMPTY;
        this.at = 0;
        return rest.length > 0 ? rest : undefined;
      }
      this.buffer = rest.length > 0 ? Buffer.concat([rest, next]) : next;
      this.at = 0;
    }
  }

  private async read(): Promise<Buffer | undefined> {
    let next: IteratorResult<Buffer>;
    try {
      next = await this.chunks.next();
    } catch (error) {
      throw this.classify(error);
    }
    if (!next.done) return next.value;
    this.ended = true;
    const md5 = this.hash.digest('hex');
    if (this.source.md5 !== undefined && md5 !== this.source.md5.toLowerCase())
      throw new InventoryReportError(
        `${this.source.name}: its MD5 is ${md5}, the manifest's MD5checksum ${this.source.md5}: not the file the report lists`,
      );
    return undefined;
  }

  private classify(error: unknown): Error {
    if (error instanceof BodyError) return new UnknownOutcomeError(error.message, error.cause);
    const code = (error as { code?: unknown }).code;
    // zlib's own errors (Z_BUF_ERROR "unexpected end of file" for a truncated stream, Z_DATA_ERROR for
    // corrupt bytes): the object S3 serves is broken, and reading it again gives the same bytes.
    if (typeof code === 'string' && code.startsWith('Z_'))
      return new InventoryReportError(
        `${this.source.name} is not a complete gzip file (${(error as Error).message}) after row ${this.row}`,
        error,
      );
    return new UnknownOutcomeError(`reading ${this.source.name} failed: ${(error as Error).message}`, error);
  }
}
