import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { putIfAbsent } from '../../kernel/aws/s3-put-if-absent.ts';
import { listVersions } from '../../kernel/aws/s3-versions.ts';
import { classifyAwsError } from '../../kernel/errors.ts';
import type { PutIfAbsentResult } from '../../kernel/put-if-absent.ts';
import { logKey } from '../delta-log.ts';
import type { DeltaStore, LogFileStream, RandomAccessObject } from '../ports.ts';
import { openRanged } from './s3-random-access.ts';
import { S3UploadStream } from './s3-upload-stream.ts';

const status = (error: unknown) =>
  (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
const isMissing = (error: unknown) => (error as Error).name === 'NoSuchKey' || status(error) === 404;

/** A Delta table under `s3://bucket/prefix`. */
export class S3DeltaStore implements DeltaStore {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly prefix: string,
  ) {}

  private key(relative: string): string {
    return this.prefix === '' ? relative : `${this.prefix}/${relative}`;
  }

  async putDataFile(path: string, bytes: Uint8Array): Promise<void> {
    try {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.key(path), Body: bytes }));
    } catch (error) {
      throw classifyAwsError('write bronze data file', error);
    }
  }

  /** The commit point: a Delta version is created once (how delta-rs commits on S3 with conditional puts). */
  putCommitIfAbsent(deltaVersion: number, body: string): Promise<PutIfAbsentResult> {
    return putIfAbsent(
      this.client,
      {
        Bucket: this.bucket,
        Key: this.key(logKey(deltaVersion)),
        Body: body,
        ContentType: 'application/json',
      },
      'write bronze commit',
    );
  }

  async getCommit(deltaVersion: number): Promise<string | undefined> {
    const bytes = await this.get(logKey(deltaVersion), 'read bronze commit');
    return bytes && new TextDecoder().decode(bytes);
  }

  listCommits(after?: number): Promise<number[]> {
    const startAfter = after === undefined ? undefined : this.key(logKey(after));
    return listVersions(this.client, this.bucket, this.key('_delta_log/'), 'list bronze commits', startAfter);
  }

  async putLogFile(name: string, body: Uint8Array | string): Promise<void> {
    try {
      await this.client.send(
        new PutObjectCommand({ Bucket: this.bucket, Key: this.key(`_delta_log/${name}`), Body: body }),
      );
    } catch (error) {
      throw classifyAwsError('write bronze log file', error);
    }
  }

  getLogFile(name: string): Promise<Uint8Array | undefined> {
    return this.get(`_delta_log/${name}`, 'read bronze log file');
  }

  openLogFile(name: string): Promise<RandomAccessObject | undefined> {
    return openRanged(
      this.client,
      { Bucket: this.bucket, Key: this.key(`_delta_log/${name}`) },
      'read bronze log file',
    );
  }

  streamLogFile(name: string): LogFileStream {
    return new S3UploadStream(
      this.client,
      { Bucket: this.bucket, Key: this.key(`_delta_log/${name}`) },
      'write bronze log file',
    );
  }

  private async get(relative: string, operation: string): Promise<Uint8Array | undefined> {
    try {
      const response = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.key(relative) }),
      );
      return (await response.Body?.transformToByteArray()) ?? new Uint8Array();
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw classifyAwsError(operation, error);
    }
  }
}
