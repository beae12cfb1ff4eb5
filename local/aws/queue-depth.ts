import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';

export interface QueueDepth {
  /** Waiting to be received. */
  readonly visible: number;
  /** Received and not yet deleted (in flight). */
  readonly inFlight: number;
}

/** How many messages a queue holds, waiting and in flight. */
export async function queueDepth(sqs: SQSClient, url: string): Promise<QueueDepth> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return {
    visible: Number(Attributes?.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0),
  };
}
