import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { classifyAwsError, isThrottle, UnknownOutcomeError } from '../../kernel/errors.ts';
import { GzipLines } from '../gzip-lines.ts';
import {
  type InventoryManifest,
  InventoryReportError,
  inventoryRow,
  parseManifest,
} from '../inventory-report.ts';
import type {
  InventoryFileRequest,
  InventoryLocation,
  InventoryReader,
  ListedObject,
  ListPage,
} from '../ports.ts';

/** A manifest.json bigger than this is refused rather than held (a million data files is ~250 MB). */
const MAX_MANIFEST_BYTES = 256 * 1024 * 1024;
/**
 * Data files kept open between pages (each holds a connection and gunzip's ~50 KB): a Lambda step reads
 * one partition at a time; the local executor runs many partitions in one process. Below the SDK's 50
 * sockets.
 */
const MAX_OPEN_FILES = 16;

/**
 * CSV reports from S3 (gzip, one object per line). A data file is streamed, never held: a page reads on from
 * where the last one stopped while its body stays open; a step on another container (or after the body was
 * closed) opens it again and skips to its row, decompressing but not decoding what it skips. Manifests are
 * checked against manifest.checksum, data files against the manifest's size and MD5checksum.
 */
export class S3InventoryReader implements InventoryReader {
  private readonly manifests = new Map<string, InventoryManifest>();
  private readonly open = new Map<string, GzipLines>();

  constructor(private readonly client: S3Client) {}

  async manifest(location: InventoryLocation): Promise<InventoryManifest> {
    const id = `s3://${location.bucket}/${location.key}`;
    const cached = this.manifests.get(id);
    if (cached) return cached;
    const bytes = await this.readAll(location);
    // S3 writes manifest.checksum beside every manifest.json.
    const checksumKey = location.key.replace(/manifest\.json$/, 'manifest.checksum');
    let checksum: Buffer;
    try {
      checksum = await this.readAll({ bucket: location.bucket, key: checksumKey });
    } catch (error) {
      if (error instanceof UnknownOutcomeError || isThrottle(error)) throw error;
      throw new InventoryReportError(
        `inventory: s3://${location.bucket}/${checksumKey}, which S3 writes beside every manifest.json, cannot be read: ${(error as Error).message}`,
        error,
      );
    }
    const manifest = parseManifest(id, bytes, checksum.toString('utf8'));
    // One run reads one report; a few are kept for the local executor, which may run several.
    if (this.manifests.size >= 4) this.manifests.clear();
    this.manifests.set(id, manifest);
    return manifest;
  }

  /** Forgets a manifest read before (the run found it changed). */
  forget(location: InventoryLocation): void {
    this.manifests.delete(`s3://${location.bucket}/${location.key}`);
  }

  async page(
    file: InventoryFileRequest,
    filter: { readonly bucket: string; readonly prefix: string },
    row: number,
    limit: number,
  ): Promise<ListPage> {
    const id = `s3://${file.bucket}/${file.key}`;
    let lines = this.open.get(id);
    this.open.delete(id);
    if (lines && lines.row !== row) {
      lines.close();
      lines = undefined;
    }
    const resumed = lines !== undefined;
    let taken: { lines: string[]; more: boolean };
    try {
      lines ??= await this.openAt(file, row);
      taken = await lines.take(limit);
    } catch (error) {
      lines?.close();
      if (!resumed || !(error instanceof UnknownOutcomeError)) throw error;
      // A body kept open since an earlier step may have been closed by S3 meanwhile: open it again, once.
      lines = await this.openAt(file, row);
      try {
        taken = await lines.take(limit);
      } catch (again) {
        lines.close();
        throw again;
      }
    }
    if (taken.more) this.keep(id, lines);
    else lines.close();
    const columns = new Map(file.columns.map((name, i) => [name, i]));
    const objects: ListedObject[] = [];
    for (const [i, line] of taken.lines.entries()) {
      try {
        const object = inventoryRow(line, columns, filter);
        if (object) objects.push(object);
      } catch (error) {
        if (!(error instanceof InventoryReportError)) throw error;
        throw new InventoryReportError(`${id} row ${row + i + 1}: ${error.message}`, error);
      }
    }
    return { objects, rows: taken.lines.length, more: taken.more };
  }

  private keep(id: string, lines: GzipLines): void {
    this.open.set(id, lines);
    for (const [oldest, stale] of this.open) {
      if (this.open.size <= MAX_OPEN_FILES) break;
      stale.close();
      this.open.delete(oldest);
    }
  }

  /** A data file from its start, skipped to `row`, once its size is the manifest's. */
  private async openAt(file: InventoryFileRequest, row: number): Promise<GzipLines> {
    const name = `s3://${file.bucket}/${file.key}`;
    const { body, contentLength } = await this.get(file);
    if (file.size !== undefined && contentLength !== undefined && contentLength !== file.size) {
      await body.return?.();
      throw new InventoryReportError(
        `${name} is ${contentLength} bytes, the manifest says ${file.size}: not the file the report lists`,
      );
    }
    const lines = new GzipLines({
      name,
      body: { [Symbol.asyncIterator]: () => body },
      ...(contentLength !== undefined ? { contentLength } : {}),
      ...(file.md5 !== undefined ? { md5: file.md5 } : {}),
    });
    try {
      await lines.skip(row);
    } catch (error) {
      lines.close();
      throw error;
    }
    return lines;
  }

  private async get(location: InventoryLocation) {
    try {
      const result = await this.client.send(
        new GetObjectCommand({ Bucket: location.bucket, Key: location.key }),
      );
      // In Node the SDK's body is a Readable: an async iterable of its chunks.
      const body = (result.Body as AsyncIterable<Uint8Array> | undefined) ?? (async function* () {})();
      return { body: body[Symbol.asyncIterator](), contentLength: result.ContentLength };
    } catch (error) {
      throw classifyAwsError(`read inventory s3://${location.bucket}/${location.key}`, error);
    }
  }

  private async readAll(location: InventoryLocation): Promise<Buffer> {
    const { body } = await this.get(location);
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for (let next = await body.next(); !next.done; next = await body.next()) {
        size += next.value.length;
        if (size > MAX_MANIFEST_BYTES)
          throw new InventoryReportError(
            `s3://${location.bucket}/${location.key} is over ${MAX_MANIFEST_BYTES} bytes: not a manifest`,
          );
        chunks.push(Buffer.from(next.value));
      }
    } catch (error) {
      await body.return?.();
      if (error instanceof InventoryReportError) throw error;
      throw new UnknownOutcomeError(
        `reading s3://${location.bucket}/${location.key} failed: ${(error as Error).message}`,
        error,
      );
    }
    return Buffer.concat(chunks);
  }
}
