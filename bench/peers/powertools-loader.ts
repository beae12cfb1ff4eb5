/**
 * The pipeline users build instead of Inlet, as Powertools for AWS Lambda (TypeScript) documents it: a
 * Lambda on the S3 event queue, `BatchProcessor` for partial batch responses, each record made idempotent
 * with `makeIdempotent` and the DynamoDB persistence layer ("Batch integration" in
 * https://docs.powertools.aws.dev/lambda/typescript/latest/features/idempotency/, the example
 * examples/snippets/idempotency/workingWithBatch.ts), and the files each invocation ingested appended to a
 * manifest-like output, one object per invocation (`<prefix>/<request id>.json`, `{ files: [...] }`).
 *
 * Only what the docs leave to the user is chosen here: the idempotency key and the output. The key is the
 * S3 object (bucket and key, Inlet's default identity), not the example's `messageId`: a duplicate S3 event
 * arrives as another SQS message, so a `messageId` key would take every duplicate for a new file (the bench
 * measures that variant too). The append is the side effect the idempotent function guards: it runs once
 * per file, and the invocation writes what it appended after the batch.
 */
import { BatchProcessor, EventType } from '@aws-lambda-powertools/batch';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Context, S3Event, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

/** The S3 object of the record's event: the identity Inlet uses by default (table + bucket + key). */
export const OBJECT_KEY = 'powertools_json(body).Records[0].s3.[bucket.name, object.key]';
/** The docs' example key: unique per SQS message, so not per S3 event. */
export const MESSAGE_ID_KEY = 'messageId';

export interface OutputFile {
  readonly bucket: string;
  readonly key: string;
  readonly size: number;
  readonly eTag: string;
  readonly sequencer: string;
  readonly eventTime: string;
}

export interface PowertoolsLoaderOptions {
  /** The clients the function builds at module scope (passed in: the bench points them at the emulator). */
  readonly dynamodb: DynamoDBClient;
  readonly s3: S3Client;
  readonly idempotencyTable: string;
  readonly outputBucket: string;
  /** Where each invocation's list goes. */
  readonly outputPrefix: string;
  /** @default OBJECT_KEY */
  readonly eventKeyJmesPath?: string;
}

/** The record's S3 object as the output lists it; notification keys are form-URL-encoded. */
function outputFile(record: SQSRecord): OutputFile {
  const [event] = (JSON.parse(record.body) as S3Event).Records;
  if (!event) throw new Error(`message ${record.messageId} holds no S3 record`);
  const { bucket, object } = event.s3;
  return {
    bucket: bucket.name,
    key: decodeURIComponent(object.key.replace(/\+/g, ' ')),
    size: object.size,
    eTag: object.eTag,
    sequencer: object.sequencer,
    eventTime: event.eventTime,
  };
}

/** The function's handler, with its module scope: one instance is one Lambda execution environment. */
export function powertoolsLoader(
  options: PowertoolsLoaderOptions,
): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  const processor = new BatchProcessor(EventType.SQS);
  const persistenceStore = new DynamoDBPersistenceLayer({
    tableName: options.idempotencyTable,
    awsSdkV3Client: options.dynamodb,
  });
  const config = new IdempotencyConfig({ eventKeyJmesPath: options.eventKeyJmesPath ?? OBJECT_KEY });
  // This invocation's part of the output: an environment runs one invocation at a time.
  let appended: OutputFile[] = [];
  const ingestFile = makeIdempotent(
    async (record: SQSRecord) => {
      const file = outputFile(record);
      appended.push(file);
      return file;
    },
    { persistenceStore, config },
  );

  return async (event, context) => {
    config.registerLambdaContext(context);
    appended = [];
    processor.register(event.Records, ingestFile, { context });
    await processor.process();
    if (appended.length > 0)
      await options.s3.send(
        new PutObjectCommand({
          Bucket: options.outputBucket,
          Key: `${options.outputPrefix}/${context.awsRequestId}.json`,
          Body: JSON.stringify({ files: appended }),
          ContentType: 'application/json',
        }),
      );
    return processor.response();
  };
}
