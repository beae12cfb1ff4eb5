import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { classifyAwsError } from '../../kernel/errors.ts';
import {
  MAINTENANCE_RECORD_PATH,
  type MaintenanceRecord,
  type MaintenanceRecords,
  parseMaintenanceRecord,
} from '../maintenance-record.ts';

const isMissing = (error: unknown) =>
  (error as Error).name === 'NoSuchKey' ||
  (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404;

/** The maintenance record of the Delta table under `s3://bucket/prefix`. */
export class S3MaintenanceRecords implements MaintenanceRecords {
  private readonly key: string;

  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    prefix: string,
  ) {
    this.key = prefix === '' ? MAINTENANCE_RECORD_PATH : `${prefix}/${MAINTENANCE_RECORD_PATH}`;
  }

  async get(): Promise<MaintenanceRecord | undefined> {
    try {
      const response = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.key }));
      return parseMaintenanceRecord((await response.Body?.transformToString()) ?? '');
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw classifyAwsError('read bronze maintenance record', error);
    }
  }

  async put(record: MaintenanceRecord): Promise<void> {
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: this.key,
          Body: JSON.stringify(record),
          ContentType: 'application/json',
        }),
      );
    } catch (error) {
      throw classifyAwsError('write bronze maintenance record', error);
    }
  }
}
