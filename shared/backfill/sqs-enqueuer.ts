import { setTimeout as sleep } from 'node:timers/promises';
import {
  SendMessageBatchCommand,
  type SendMessageBatchCommandOutput,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { classifyAwsError, DefiniteFailureError } from '../errors.ts';
import type { ObjectRef } from '../model.ts';

/** Puts files on the ingest queue, where the batcher claims them like any live event. */
export interface Enqueuer {
  enqueue(files: readonly ObjectRef[], origin: { table: string; run: string }): Promise<void>;
}

/** S3 notification keys are form-URL-encoded ('+' for space, '/' kept): the batcher decodes them so. */
export function encodeNotificationKey(key: string): string {
  return encodeURIComponent(key).replace(/%20/g, '+').replace(/%2F/g, '/');
}

/**
 * An S3 notification record (eventVersion 2.1) for a listed object, plus `inlet.table`: the batcher claims
 * it for that table only. The same parser, router and claim as a live event: the ledger decides.
 */
export function backfillRecord(file: ObjectRef, origin: { table: string; run: string }) {
  return {
    eventVersion: '2.1',
    eventSource: 'aws:s3',
    eventTime: file.eventTime,
    eventName: 'ObjectCreated:Backfill',
    userIdentity: { principalId: `inlet-backfill:${origin.run}` },
    s3: {
      s3SchemaVersion: '1.0',
      bucket: { name: file.bucket },
      object: {
        key: encodeNotificationKey(file.key),
        size: file.size,
        ...(file.eTag ? { eTag: file.eTag } : {}),
        ...(file.versionId ? { versionId: file.versionId } : {}),
      },
    },
    inlet: { table: origin.table, run: origin.run },
  };
}

export interface SqsEnqueuerOptions {
  readonly client: SQSClient;
  readonly queueUrl: string;
  /** Files per message: fewer SQS requests per file; the batcher claims each record on its own. */
  readonly recordsPerMessage: number;
}

const SEND_ATTEMPTS = 6;

/** SendMessageBatch, 10 messages a request; entries SQS refused are sent again with backoff. */
export class SqsEnqueuer implements Enqueuer {
  constructor(private readonly options: SqsEnqueuerOptions) {}

  async enqueue(files: readonly ObjectRef[], origin: { table: string; run: string }): Promise<void> {
    const per = this.options.recordsPerMessage;
    const bodies: string[] = [];
    for (let i = 0; i < files.length; i += per) {
      bodies.push(JSON.stringify({ Records: files.slice(i, i + per).map((f) => backfillRecord(f, origin)) }));
    }
    for (let i = 0; i < bodies.length; i += 10) await this.sendBatch(bodies.slice(i, i + 10));
  }

  private async sendBatch(bodies: readonly string[]): Promise<void> {
    let pending = bodies.map((body, i) => ({ Id: String(i), MessageBody: body }));
    for (let attempt = 1; pending.length > 0; attempt++) {
      let result: SendMessageBatchCommandOutput;
      try {
        result = await this.options.client.send(
          new SendMessageBatchCommand({ QueueUrl: this.options.queueUrl, Entries: pending }),
        );
      } catch (error) {
        throw classifyAwsError('enqueue backfill records', error);
      }
      const failed = new Set((result.Failed ?? []).map((f) => f.Id));
      if (failed.size === 0) return;
      if (attempt >= SEND_ATTEMPTS) {
        const codes = [...new Set((result.Failed ?? []).map((f) => f.Code))].join(', ');
        throw new DefiniteFailureError(`SQS refused ${failed.size} backfill messages: ${codes}`);
      }
      pending = pending.filter((entry) => failed.has(entry.Id));
      await sleep(Math.random() * Math.min(5_000, 100 * 2 ** attempt));
    }
  }
}
