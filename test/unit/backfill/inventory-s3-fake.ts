import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';

/** What a GetObject body does: S3's bytes, or bytes made on the fly (a file too big to hold). */
export type FakeBody = Buffer | (() => AsyncIterable<Buffer>);

export interface FakeS3Object {
  readonly body: FakeBody;
  /** ContentLength; the body's length unless given (a lazily made body must give it). */
  readonly size?: number;
}

const s3Error = (name: string, status: number) =>
  Object.assign(new Error(name), { name, $fault: 'client', $metadata: { httpStatusCode: status } });

/**
 * GetObject and PutObject over objects in memory, for the S3 Inventory reader: bodies are streams (as the
 * SDK's are in Node), served in 64 KiB chunks (or `chunkBytes`), with `transformToByteArray` too. Connections can be lost: a
 * GET cut after some bytes, or every open body at once. Counts the bytes served.
 */
export function inventoryS3(options: { readonly chunkBytes?: number } = {}) {
  const chunkBytes = options.chunkBytes ?? 65_536;
  const objects = new Map<string, FakeS3Object>();
  const cuts = new Map<string, number>();
  const gets: string[] = [];
  let served = 0;
  let generation = 0;
  const id = (bucket: string | undefined, key: string | undefined) => `${bucket}/${key}`;
  async function* chunks(body: FakeBody, cutAt: number | undefined): AsyncIterable<Buffer> {
    let sent = 0;
    const born = generation;
    const source = typeof body === 'function' ? body() : [body];
    for await (const whole of source) {
      for (let at = 0; at < whole.length; at += chunkBytes) {
        let chunk = whole.subarray(at, at + chunkBytes);
        if (cutAt !== undefined && sent + chunk.length > cutAt) {
          chunk = chunk.subarray(0, cutAt - sent);
          if (chunk.length > 0) yield chunk;
          throw Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
        }
        if (born !== generation) throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
        sent += chunk.length;
        served += chunk.length;
        yield chunk;
      }
    }
  }
  const client = {
    send: async (command: GetObjectCommand | PutObjectCommand) => {
      const input = command.input as { Bucket?: string; Key?: string; Body?: unknown };
      const name = command.constructor.name;
      if (name === 'PutObjectCommand') {
        const body = input.Body;
        objects.set(id(input.Bucket, input.Key), {
          body: Buffer.isBuffer(body) ? body : Buffer.from(String(body)),
        });
        return {};
      }
      if (name !== 'GetObjectCommand') throw new Error(`fake S3: no ${name}`);
      gets.push(id(input.Bucket, input.Key));
      const object = objects.get(id(input.Bucket, input.Key));
      // The backfill function has no s3:ListBucket on inventory buckets: a missing key is a 403.
      if (!object) throw s3Error('AccessDenied', 403);
      const cut = cuts.get(id(input.Bucket, input.Key));
      cuts.delete(id(input.Bucket, input.Key));
      const stream = Readable.from(chunks(object.body, cut), { objectMode: false });
      const whole = Buffer.isBuffer(object.body) ? object.body : undefined;
      Object.assign(stream, {
        transformToByteArray: async () => {
          const parts: Buffer[] = [];
          for await (const c of stream) parts.push(c as Buffer);
          return new Uint8Array(Buffer.concat(parts));
        },
      });
      return {
        Body: stream,
        ContentLength: object.size ?? whole?.length,
        ...(whole ? { ETag: `"${createHash('md5').update(whole).digest('hex')}"` } : {}),
      };
    },
  } as unknown as S3Client;
  return {
    client,
    objects,
    gets,
    /** Bytes of bodies handed out so far. */
    served: () => served,
    put: (bucket: string, key: string, object: FakeS3Object) => objects.set(id(bucket, key), object),
    get: (bucket: string, key: string) => objects.get(id(bucket, key)),
    /** Every body handed out so far fails at its next chunk (S3 closed idle connections). */
    breakOpenBodies: () => {
      generation++;
    },
    /** The next GetObject of this key loses its connection after `bytes` bytes. */
    cutNextGet: (bucket: string, key: string, bytes: number) => cuts.set(id(bucket, key), bytes),
  };
}
