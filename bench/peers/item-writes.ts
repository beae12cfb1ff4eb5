/**
 * DynamoDB applies the writes to one item one after the other: "Individual write operations such as
 * UpdateItem are atomic and always operate on the most recent version of the item, regardless of
 * concurrency" (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/BestPractices_ImplementingVersionControl.html),
 * so of two conditional writes racing on an item the second sees the first's result.
 * moto 5.2.5 checks a condition and writes without a lock, so racing conditional PutItems on one key can
 * both succeed (measured: 3 of 300 triples of concurrent puts had two successes). The bench's pipelines run
 * in this process, so this middleware makes their writes to one item wait for each other: the emulator then
 * answers a race as DynamoDB does, and a file counted twice is the pipeline's doing, not moto's.
 */
import type {
  HandlerExecutionContext,
  InitializeHandler,
  InitializeHandlerArguments,
  InitializeMiddleware,
  MiddlewareStack,
} from '@smithy/types';

type Attributes = Record<string, unknown>;
interface WriteInput {
  TableName?: string;
  Item?: Attributes;
  Key?: Attributes;
  TransactItems?: {
    Put?: { TableName?: string; Item?: Attributes };
    Update?: { TableName?: string; Key?: Attributes };
    Delete?: { TableName?: string; Key?: Attributes };
    ConditionCheck?: { TableName?: string; Key?: Attributes };
  }[];
}

/** The items a write command touches, as `table|key values` strings; none for reads. */
function itemsOf(command: string, input: WriteInput, keyAttributes: Record<string, readonly string[]>) {
  const item = (table: string | undefined, attributes: Attributes | undefined) => {
    const names = keyAttributes[table ?? ''];
    if (!table || !attributes || !names) return [];
    return [`${table}|${JSON.stringify(names.map((name) => attributes[name]))}`];
  };
  switch (command) {
    case 'PutItemCommand':
      return item(input.TableName, input.Item);
    case 'UpdateItemCommand':
    case 'DeleteItemCommand':
      return item(input.TableName, input.Key);
    case 'TransactWriteItemsCommand':
      return (input.TransactItems ?? []).flatMap((t) => {
        const put = t.Put ? item(t.Put.TableName, t.Put.Item) : [];
        const keyed = t.Update ?? t.Delete ?? t.ConditionCheck;
        return [...put, ...(keyed ? item(keyed.TableName, keyed.Key) : [])];
      });
    default:
      return [];
  }
}

/**
 * Writes through `client` to one item (by the tables' key attributes, e.g. `{ ledger: ['pk', 'sk'] }`) run
 * one at a time, in the order they were sent; writes to different items still overlap.
 */
export function serializeItemWrites<I extends object, O extends object>(
  client: { middlewareStack: MiddlewareStack<I, O> },
  keyAttributes: Record<string, readonly string[]>,
): void {
  const tails = new Map<string, Promise<void>>();
  client.middlewareStack.add(
    ((next: InitializeHandler<I, O>, context: HandlerExecutionContext) =>
      async (args: InitializeHandlerArguments<I>) => {
        const command = (context as { commandName?: string }).commandName ?? '';
        const items = itemsOf(command, args.input as WriteInput, keyAttributes);
        if (items.length === 0) return next(args);
        const before = items.map((key) => tails.get(key));
        let release = () => {};
        const done = new Promise<void>((resolve) => {
          release = resolve;
        });
        for (const key of items) tails.set(key, done);
        await Promise.all(before);
        try {
          return await next(args);
        } finally {
          release();
          for (const key of items) if (tails.get(key) === done) tails.delete(key);
        }
      }) as InitializeMiddleware<I, O>,
    { step: 'initialize', name: 'benchSerializeItemWrites' },
  );
}
