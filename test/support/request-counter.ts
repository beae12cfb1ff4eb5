import type {
  HandlerExecutionContext,
  InitializeHandler,
  InitializeHandlerArguments,
  InitializeMiddleware,
  MiddlewareStack,
} from '@smithy/types';

/** Counts of AWS requests by service and operation, and DynamoDB write items (what write units bill). */
export class RequestCounter {
  readonly requests = new Map<string, number>();
  dynamodbWriteItems = 0;
  dynamodbReadItems = 0;
  /** Items written inside TransactWriteItems: DynamoDB bills each twice (prepare and commit). */
  dynamodbTransactItems = 0;

  total(prefix = ''): number {
    let sum = 0;
    for (const [name, count] of this.requests) if (name.startsWith(prefix)) sum += count;
    return sum;
  }

  reset(): void {
    this.requests.clear();
    this.dynamodbWriteItems = 0;
    this.dynamodbReadItems = 0;
    this.dynamodbTransactItems = 0;
  }
}

const WRITE_ONE = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand']);
const READ_ONE = new Set(['GetItemCommand']);

/**
 * SDK middleware that counts every command a client sends: measured, not estimated (bench and the cost
 * test). Counted once per command at `initialize`, before SDK retries.
 */
export function countRequests<I extends object, O extends object>(
  client: { middlewareStack: MiddlewareStack<I, O> },
  service: string,
  counter: RequestCounter,
): void {
  client.middlewareStack.add(
    ((next: InitializeHandler<I, O>, context: HandlerExecutionContext) =>
      async (args: InitializeHandlerArguments<I>) => {
        const command = (context as { commandName?: string }).commandName ?? 'Unknown';
        const key = `${service}.${command.replace(/Command$/, '')}`;
        counter.requests.set(key, (counter.requests.get(key) ?? 0) + 1);
        if (service === 'dynamodb') {
          const input = args.input as { TransactItems?: unknown[]; RequestItems?: Record<string, unknown[]> };
          if (WRITE_ONE.has(command)) counter.dynamodbWriteItems += 1;
          if (READ_ONE.has(command)) counter.dynamodbReadItems += 1;
          if (command === 'TransactWriteItemsCommand') {
            counter.dynamodbWriteItems += input.TransactItems?.length ?? 0;
            counter.dynamodbTransactItems += input.TransactItems?.length ?? 0;
          }
          if (command === 'BatchWriteItemCommand') {
            for (const items of Object.values(input.RequestItems ?? {}))
              counter.dynamodbWriteItems += items.length;
          }
        }
        return next(args);
      }) as InitializeMiddleware<I, O>,
    { step: 'initialize', name: `inletRequestCounter-${service}` },
  );
}
