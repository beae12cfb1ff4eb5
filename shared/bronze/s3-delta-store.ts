import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { classifyAwsError } from '../errors.ts';
import type { PutIfAbsentResult } from '../storage/batch-store.ts';
import { listVersions } from '../storage/s3-versions.ts';
import { logKey } from './delta-log.ts';
import type { DeltaStore } from './ports.ts';

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

  async putCommitIfAbsent(deltaVersion: number, body: string): Promise<PutIfAbsentResult> {
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: this.key(logKey(deltaVersion)),
          Body: body,
          ContentType: 'application/json',
          // The commit point: a Delta version is created once (how delta-rs commits on S3 with conditional puts).
          IfNoneMatch: '*',
        }),
      );
      return 'created';
    } catch (error) {
      // 412: already there. 409: a concurrent conditional write to the same key is in flight (AWS).
      if (status(error) === 412 || status(error) === 409) return 'exists';
      throw classifyAwsError('write bronze commit', error);
    }
  }

  async getCommit(deltaVersion: number): Promise<string | undefined> {
    try {
      const response = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.key(logKey(deltaVersion)) }),
      );
      return (await response.Body?.transformToString()) ?? '';
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw classifyAwsError('read bronze commit', error);
    }
  }

  async listCommits(): Promise<number[]> {
    return listVersions(this.client, this.bucket, this.key('_delta_log/'), 'list bronze commits');
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

  async getLogFile(name: string): Promise<Uint8Array | undefined> {
    try {
      const response = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.key(`_delta_log/${name}`) }),
      );
      return (await response.Body?.transformToByteArray()) ?? new Uint8Array();
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw classifyAwsError('read bronze log file', error);
    }
  }
}
