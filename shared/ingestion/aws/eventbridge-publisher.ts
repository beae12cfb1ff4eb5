import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { classifyAwsError, UnknownOutcomeError } from '../../kernel/errors.ts';
import { BATCH_COMMITTED, EVENT_SOURCE } from '../../kernel/names.ts';
import type { BatchCommittedEvent, EventPublisher } from '../batch-store.ts';

export class EventBridgePublisher implements EventPublisher {
  constructor(
    private readonly options: { readonly client: EventBridgeClient; readonly eventBusName: string },
  ) {}

  async batchCommitted(event: BatchCommittedEvent): Promise<void> {
    let failed = 0;
    try {
      const result = await this.options.client.send(
        new PutEventsCommand({
          Entries: [
            {
              EventBusName: this.options.eventBusName,
              Source: EVENT_SOURCE,
              DetailType: BATCH_COMMITTED,
              Detail: JSON.stringify(event),
              Resources: [],
            },
          ],
        }),
      );
      failed = result.FailedEntryCount ?? 0;
    } catch (error) {
      throw classifyAwsError('publish BatchCommitted', error);
    }
    if (failed > 0)
      throw new UnknownOutcomeError(
        `EventBridge rejected BatchCommitted for ${event.table} v${event.version}`,
      );
  }
}
