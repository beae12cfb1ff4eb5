import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { putIfAbsent } from '../../kernel/aws/s3-put-if-absent.ts';
import { listVersions } from '../../kernel/aws/s3-versions.ts';
import { classifyAwsError, StagedListMissingError } from '../../kernel/errors.ts';
import type { PutIfAbsentResult } from '../../kernel/put-if-absent.ts';
import type { BatchStore } from '../batch-store.ts';
import { type Manifest, manifestKey, type StagedList, stagedListKey } from '../manifest.ts';

export interface S3BatchStoreOptions {
  readonly client: S3Client;
  /** Holds `<table>/_manifests/`, `_staging/` and `_quarantine/`. */
  readonly bucket: string;
}

const status = (error: unknown) =>
  (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;

export class S3BatchStore implements BatchStore {
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(options: S3BatchStoreOptions) {
    this.client = options.client;
    this.bucket = options.bucket;
  }

  private async getJson<T>(key: string, operation: string): Promise<T | undefined> {
    try {
      const response = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return JSON.parse((await response.Body?.transformToString()) ?? 'null') as T;
    } catch (error) {
      if ((error as Error).name === 'NoSuchKey' || status(error) === 404) return undefined;
      throw classifyAwsError(operation, error);
    }
  }

  async putStagedList(list: StagedList): Promise<string> {
    const key = stagedListKey(list.table, list.batchId);
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: JSON.stringify(list),
          ContentType: 'application/json',
        }),
      );
    } catch (error) {
      throw classifyAwsError('stage file list', error);
    }
    return key;
  }

  async getStagedList(key: string): Promise<StagedList> {
    const list = await this.getJson<StagedList>(key, 'read staged list');
    if (!list) throw new StagedListMissingError(key);
    return list;
  }

  async deleteStagedList(key: string): Promise<void> {
    try {
      // S3 answers 204 for a key that is already gone, so a repeated delete is a success.
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (error) {
      throw classifyAwsError('delete staged list', error);
    }
  }

  putManifestIfAbsent(manifest: Manifest): Promise<PutIfAbsentResult> {
    // A published version is never overwritten. (Not atomic on moto; the reservation covers that.)
    return putIfAbsent(
      this.client,
      {
        Bucket: this.bucket,
        Key: manifestKey(manifest.table, manifest.version),
        Body: JSON.stringify(manifest),
        ContentType: 'application/json',
      },
      'write manifest',
    );
  }

  getManifest(table: string, version: number): Promise<Manifest | undefined> {
    return this.getJson<Manifest>(manifestKey(table, version), 'read manifest');
  }

  async listManifestVersions(table: string): Promise<number[]> {
    return listVersions(this.client, this.bucket, `${table}/_manifests/`, 'list manifests');
  }
}
