/**
 * SQS message visibility, the ports of every queue consumer that gives a failed message back early (the
 * batcher, the committer, the bronze sink) or holds its messages with a lease (the sink).
 */

/** A message (by its receipt handle) and when it should come back, in seconds from now. */
export interface RetryLater {
  readonly receiptHandle: string;
  /** The queue's ARN, as Lambda's SQS event carries it. */
  readonly queueArn: string;
  readonly seconds: number;
}

/** Gives failed messages their own visibility timeout instead of the queue's (30 minutes on AWS). */
export interface RetryScheduler {
  /** Rejects when SQS refused some of them (`VisibilityRefusedError`): those keep the visibility they had. */
  retryLater(messages: readonly RetryLater[]): Promise<void>;
}

/**
 * A message whose visibility `ChangeMessageVisibilityBatch` did not change while the call itself succeeded:
 * SQS answers each entry (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibilityBatch.html).
 */
export interface RefusedVisibility {
  readonly receiptHandle: string;
  /** `ReceiptHandleIsInvalid`, `MessageNotInflight`, `InvalidParameterValue`, or a server-side code. */
  readonly code: string;
  /** True: the request was wrong for this message (retrying it cannot help); false: SQS failed, try again. */
  readonly senderFault: boolean;
  readonly message: string;
}

/** Sets in-flight messages' visibility timeouts, each counted from the call (not from the receive). */
export interface MessageVisibility {
  /** Resolves with the entries SQS refused; rejects when the call failed (none, some or all applied). */
  changeVisibility(
    messages: readonly RetryLater[],
    signal?: AbortSignal,
  ): Promise<readonly RefusedVisibility[]>;
}
