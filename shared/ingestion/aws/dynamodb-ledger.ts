import {
  ConditionalCheckFailedException,
  type DynamoDBClient,
  PutItemCommand,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  paginateQuery,
  paginateScan,
  ScanCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { type Backoff, backoffDelay } from '../../kernel/backoff.ts';
import { type Clock, systemClock } from '../../kernel/clock.ts';
import {
  classifyAwsError,
  isThrottle,
  mayHaveBeenApplied,
  ThrottledError,
  UnknownOutcomeError,
} from '../../kernel/errors.ts';
import {
  type ClaimResult,
  type FenceResult,
  type FileEntry,
  type FinalizeResult,
  type Ledger,
  type LedgerQueries,
  MAX_BATCHES_PER_VERSION,
  type MoveResult,
  reservedBatchIds,
  type SealedIndexKey,
  type SealRequest,
  type SealResult,
  TRANSACTION_RETRY,
} from '../ledger.ts';
import { decodeBatch, decodeFileEntry, decodeOwner, decodeQuarantine, decodeTable } from '../ledger-items.ts';
import {
  batchKey,
  fileKey,
  parseFilePk,
  quarantineKey,
  quarantinePartitions,
  SEALED_INDEX,
  tableKey,
} from '../ledger-keys.ts';
import {
  BATCH_STATE,
  type BatchRecord,
  type FileRef,
  type PendingVersion,
  type QuarantineEntry,
  type TableRecord,
} from '../model.ts';

export interface DynamoDbLedgerOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** Backoff between retries of a transaction or of unprocessed keys. @default systemClock */
  readonly clock?: Clock;
}

type Item = Record<string, unknown>;

/** Pages of the `sealed` index one group-commit Query reads at most (each of 2x the group's batch limit). */
export const MAX_SEALED_QUERY_PAGES = 4;

const isConditionFailure = (error: unknown): error is ConditionalCheckFailedException =>
  error instanceof ConditionalCheckFailedException ||
  (error as Error | undefined)?.name === 'ConditionalCheckFailedException';

const isCancelled = (error: unknown): error is TransactionCanceledException =>
  error instanceof TransactionCanceledException ||
  (error as Error | undefined)?.name === 'TransactionCanceledException';

/** Cancellation reasons that say "not now" rather than "no": the transaction did not happen; retry it. */
const TRANSIENT_REASONS = new Set([
  'TransactionConflict',
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
  'RequestLimitExceeded',
]);
/** Unprocessed BatchGetItem keys are asked for again after 100 ms, 200 ms ... at most 2 s (full jitter). */
const UNPROCESSED_BACKOFF: Backoff = { base: 50, cap: 2_000, jitter: 'full' };

/** True when the cancellation has no refusal in it, only conflicts or throttles (then retry it). */
function cancelledTransiently(error: TransactionCanceledException): boolean {
  const codes = (error.CancellationReasons ?? []).map((reason) => reason.Code ?? 'None');
  return codes.some((code) => TRANSIENT_REASONS.has(code)) && !codes.includes('ConditionalCheckFailed');
}

/** The ledger in one DynamoDB table (pk, sk strings; one sparse GSI over batch items only). */
export class DynamoDbLedger implements Ledger, LedgerQueries {
  private readonly doc: DynamoDBDocumentClient;
  /** The claim's own client: one put per file, sent without the document client's per-request layers. */
  private readonly client: DynamoDBClient;
  private readonly tableName: string;
  private readonly clock: Clock;

  constructor(options: DynamoDbLedgerOptions) {
    this.clock = options.clock ?? systemClock;
    this.doc = DynamoDBDocumentClient.from(options.client, {
      marshallOptions: { removeUndefinedValues: true },
    });
    this.client = options.client;
    this.tableName = options.tableName;
  }

  private async send<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw classifyAwsError(operation, error);
    }
  }

  /** Every page of a Query or Scan through the SDK's paginator, each page's failure classified like a call. */
  private async *pages<P>(operation: string, paginator: AsyncIterable<P>): AsyncGenerator<P> {
    const pages = paginator[Symbol.asyncIterator]();
    for (;;) {
      const next = await this.send(operation, () => pages.next());
      if (next.done) return;
      yield next.value;
    }
  }

  /**
   * A TransactWriteItems whose transient refusals (a concurrent transaction on the same item, a throttle)
   * are retried here (TRANSACTION_RETRY). Refusals (ConditionalCheckFailed) and other errors are the caller's.
   */
  private async transact(input: ConstructorParameters<typeof TransactWriteCommand>[0]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.doc.send(new TransactWriteCommand(input));
        return;
      } catch (error) {
        // A throttle is retried here too, but only if no SDK attempt may have applied the transaction.
        const transient = isCancelled(error)
          ? cancelledTransiently(error)
          : isThrottle(error) && !mayHaveBeenApplied(error);
        if (!transient || attempt >= TRANSACTION_RETRY.attempts) throw error;
        await this.clock.sleep(backoffDelay(TRANSACTION_RETRY.backoff, attempt, this.clock.random));
      }
    }
  }

  async claimFile(file: FileRef, batchId: string, leaseUntil: number): Promise<ClaimResult> {
    const { pk, sk } = fileKey(file.table, file.identity);
    try {
      // The one request per file, written in DynamoDB's attribute-value form rather than through the document
      // client, whose marshalling and per-request middleware stack cost 50-80 µs of CPU a claim
      // (docs/performance.md, "Protocol against raw writes"). The same request on the wire.
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          // What the protocol reads of a claim: its owner and lease. The file's size and event time are in the
          // staged list and the manifest, its record.
          Item: {
            pk: { S: pk },
            sk: { S: sk },
            batchId: { S: batchId },
            leaseUntil: { N: String(leaseUntil) },
          },
          // Two batchers (or two deliveries of one event) race for the file: exactly one put creates it.
          ConditionExpression: 'attribute_not_exists(pk)',
          // The loser learns the owner from the failed write itself: no read on the duplicate path.
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { kind: 'claimed' };
    } catch (error) {
      if (isConditionFailure(error)) {
        const old = error.Item ? unmarshall(error.Item) : undefined;
        if (!old) return { kind: 'owned', owner: { batchId: '', leaseUntil: 0 } };
        return {
          kind: 'owned',
          owner: decodeOwner(old),
        };
      }
      throw classifyAwsError('claim file', error);
    }
  }

  async getBatch(table: string, batchId: string): Promise<BatchRecord | undefined> {
    const { Item } = await this.send('get batch', () =>
      this.doc.send(
        new GetCommand({ TableName: this.tableName, Key: batchKey(table, batchId), ConsistentRead: true }),
      ),
    );
    return Item ? decodeBatch(Item) : undefined;
  }

  async getBatches(table: string, batchIds: readonly string[]): Promise<BatchRecord[]> {
    if (batchIds.length === 0) return [];
    const Keys = [...new Set(batchIds)].map((id) => batchKey(table, id));
    const page = await this.send('get batches', () =>
      this.doc.send(
        new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys, ConsistentRead: true } } }),
      ),
    );
    return (page.Responses?.[this.tableName] ?? []).map(decodeBatch);
  }

  async fenceBatch(table: string, batchId: string, byBatchId: string): Promise<FenceResult> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...batchKey(table, batchId),
            table,
            batchId,
            state: BATCH_STATE.aborted,
            abortedBy: byBatchId,
          },
          // Fence: once BATCH#B is ABORTED its batcher can never seal it (the seal needs the item absent), so
          // it can never publish a list naming a file we move. Fails if B got SEALED first: then it owns them.
          ConditionExpression: 'attribute_not_exists(pk) OR #state = :aborted',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':aborted': BATCH_STATE.aborted },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { kind: 'fenced' };
    } catch (error) {
      if (isConditionFailure(error)) {
        const batch = error.Item ? decodeBatch(unmarshall(error.Item)) : await this.getBatch(table, batchId);
        if (batch && batch.state !== BATCH_STATE.aborted) return { kind: 'batch-live', batch };
      }
      throw classifyAwsError('fence batch', error);
    }
  }

  async moveFile(
    file: FileRef,
    fromBatchId: string,
    toBatchId: string,
    leaseUntil: number,
  ): Promise<MoveResult> {
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: fileKey(file.table, file.identity),
          UpdateExpression: 'SET batchId = :to, leaseUntil = :lease, takenFrom = :from',
          // Two batchers taking over the same file: only the first moves it; the other learns the new owner.
          ConditionExpression: 'batchId = :from',
          ExpressionAttributeValues: { ':to': toBatchId, ':from': fromBatchId, ':lease': leaseUntil },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { kind: 'moved' };
    } catch (error) {
      if (isConditionFailure(error) && error.Item) {
        const old = unmarshall(error.Item);
        return {
          kind: 'owned',
          owner: decodeOwner(old),
        };
      }
      throw classifyAwsError('move file', error);
    }
  }

  async sealBatch(request: SealRequest): Promise<SealResult> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...batchKey(request.table, request.batchId),
            ...request,
            state: BATCH_STATE.sealed,
            [SEALED_INDEX.partitionKey]: request.table,
          },
          // A takeover wrote ABORTED first: this batch is fenced and must not be published.
          ConditionExpression: 'attribute_not_exists(pk)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { kind: 'sealed' };
    } catch (error) {
      if (isConditionFailure(error)) {
        const state = error.Item ? decodeBatch(unmarshall(error.Item)).state : 'UNKNOWN';
        // An SDK retry of our own successful seal finds SEALED: that is success.
        if (state === BATCH_STATE.sealed || state === BATCH_STATE.committed) return { kind: 'sealed' };
        return { kind: 'fenced', state };
      }
      throw classifyAwsError('seal batch', error);
    }
  }

  async getTable(table: string): Promise<TableRecord> {
    const { Item } = await this.send('get table', () =>
      this.doc.send(
        new GetCommand({ TableName: this.tableName, Key: tableKey(table), ConsistentRead: true }),
      ),
    );
    return decodeTable(table, Item);
  }

  async reserveVersion(table: string, expectedHead: number, pending: PendingVersion): Promise<boolean> {
    const batchIds = reservedBatchIds(pending);
    if (batchIds.length > MAX_BATCHES_PER_VERSION || batchIds[0] !== pending.batchId)
      throw new Error(`a reservation names 1..${MAX_BATCHES_PER_VERSION} batches, its own first`);
    try {
      await this.transact({
        TransactItems: [
          {
            Update: {
              TableName: this.tableName,
              Key: tableKey(table),
              UpdateExpression: 'SET pending = :pending, #table = :table',
              // Linear versions: one reservation holds head+1, and only if nobody moved head meanwhile.
              ConditionExpression:
                expectedHead === 0
                  ? 'attribute_not_exists(pending) AND (attribute_not_exists(head) OR head = :head)'
                  : 'attribute_not_exists(pending) AND head = :head',
              ExpressionAttributeNames: { '#table': 'table' },
              ExpressionAttributeValues: { ':pending': pending, ':head': expectedHead, ':table': table },
            },
          },
          // A committer that read SEALED (or a stale index entry) after another one committed a batch must
          // not give it a second version: every batch of the group must still be SEALED.
          ...batchIds.map((batchId) => ({
            ConditionCheck: {
              TableName: this.tableName,
              Key: batchKey(table, batchId),
              ConditionExpression: '#state = :sealed',
              ExpressionAttributeNames: { '#state': 'state' },
              ExpressionAttributeValues: { ':sealed': BATCH_STATE.sealed },
            },
          })),
        ],
      });
      return true;
    } catch (error) {
      // Refused (head moved, another reservation, batch no longer SEALED), or still conflicting after the
      // retries: either way the caller re-reads and decides; a reservation we hold shows up in that read.
      if (isCancelled(error)) return false;
      const failure = classifyAwsError('reserve version', error);
      if (!(failure instanceof UnknownOutcomeError)) throw failure;
      // Maybe applied: the table says. Only the holder or a finisher removes a pending version, and both
      // leave the batch COMMITTED, which the caller checks when this returns false.
      const now = await this.getTable(table);
      return now.pending?.batchId === pending.batchId && now.pending.version === pending.version;
    }
  }

  async finalizeCommit(
    table: string,
    pending: PendingVersion,
    counters: { files: number; bytes: number },
  ): Promise<FinalizeResult> {
    const now = new Date().toISOString();
    const batchIds = reservedBatchIds(pending);
    try {
      await this.transact({
        TransactItems: [
          {
            Update: {
              TableName: this.tableName,
              Key: tableKey(table),
              UpdateExpression:
                'SET head = :v, lastCommitAt = :now, lastBatchId = :last, files = if_not_exists(files, :zero) + :files, #bytes = if_not_exists(#bytes, :zero) + :bytes REMOVE pending',
              // Only the reservation holder moves head, exactly once.
              ConditionExpression: 'pending.batchId = :b AND pending.version = :v',
              ExpressionAttributeNames: { '#bytes': 'bytes' },
              ExpressionAttributeValues: {
                ':v': pending.version,
                ':b': pending.batchId,
                ':last': batchIds[batchIds.length - 1] ?? pending.batchId,
                ':now': now,
                ':zero': 0,
                ':files': counters.files,
                ':bytes': counters.bytes,
              },
            },
          },
          // Each batch of the version: the batch stays in the sealed index until markPublished, so a
          // committed version whose event failed is found there and published later, at no extra write.
          ...batchIds.map((batchId) => ({
            Update: {
              TableName: this.tableName,
              Key: batchKey(table, batchId),
              UpdateExpression: 'SET #state = :committed, version = :v, committedAt = :at',
              ConditionExpression: '#state = :sealed',
              ExpressionAttributeNames: { '#state': 'state' },
              ExpressionAttributeValues: {
                ':committed': BATCH_STATE.committed,
                ':sealed': BATCH_STATE.sealed,
                ':v': pending.version,
                ':at': pending.reservedAt,
              },
            },
          })),
        ],
      });
      return 'committed';
    } catch (error) {
      const failure = classifyAwsError('finalize commit', error);
      if (isCancelled(error) || failure instanceof UnknownOutcomeError) {
        // Refused because it happened already (our own earlier attempt, or a committer finishing our
        // reservation), or maybe applied: the batch item says which.
        const batch = await this.getBatch(table, pending.batchId);
        if (batch?.state === BATCH_STATE.committed && batch.version === pending.version)
          return 'already-committed';
      }
      throw failure;
    }
  }

  async markPublished(table: string, batchId: string, at: string): Promise<void> {
    await this.send('mark published', () =>
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: batchKey(table, batchId),
          // Leaving the sealed index is the last step of a commit: staged list deleted, event published.
          UpdateExpression: 'SET publishedAt = :at REMOVE #sealedTable',
          ConditionExpression: '#state = :committed',
          ExpressionAttributeNames: { '#state': 'state', '#sealedTable': SEALED_INDEX.partitionKey },
          ExpressionAttributeValues: { ':at': at, ':committed': BATCH_STATE.committed },
        }),
      ),
    );
  }

  async listSealedBatches(table: string, sealedBefore: number): Promise<BatchRecord[]> {
    const batches: BatchRecord[] = [];
    const query = paginateQuery(
      { client: this.doc },
      {
        TableName: this.tableName,
        IndexName: SEALED_INDEX.name,
        KeyConditionExpression: '#p = :table AND #s < :before',
        ExpressionAttributeNames: { '#p': SEALED_INDEX.partitionKey, '#s': SEALED_INDEX.sortKey },
        ExpressionAttributeValues: { ':table': table, ':before': sealedBefore },
      },
    );
    for await (const page of this.pages('list sealed batches', query))
      for (const item of page.Items ?? []) batches.push(decodeBatch(item));
    return batches;
  }

  async quarantine(entry: QuarantineEntry): Promise<void> {
    await this.send('quarantine', () =>
      this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...quarantineKey(entry.sentAt.slice(0, 10), entry.id), ...entry },
        }),
      ),
    );
  }

  async listQuarantine(days: readonly string[]): Promise<QuarantineEntry[]> {
    const partitions = days.flatMap(quarantinePartitions);
    const pages = await Promise.all(partitions.map((pk) => this.queryQuarantine(pk)));
    return pages
      .flat()
      .sort((a, b) => (a.sentAt === b.sentAt ? (a.id < b.id ? -1 : 1) : a.sentAt < b.sentAt ? -1 : 1));
  }

  private async queryQuarantine(pk: string): Promise<QuarantineEntry[]> {
    const entries: QuarantineEntry[] = [];
    const query = paginateQuery(
      { client: this.doc },
      {
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': pk },
      },
    );
    for await (const page of this.pages('list quarantine', query)) {
      for (const item of page.Items ?? []) {
        entries.push(decodeQuarantine(item));
      }
    }
    return entries;
  }

  async getFile(table: string, identity: string): Promise<FileEntry | undefined> {
    const { Item } = await this.send('get file', () =>
      this.doc.send(
        new GetCommand({ TableName: this.tableName, Key: fileKey(table, identity), ConsistentRead: true }),
      ),
    );
    return Item ? decodeFileEntry(Item) : undefined;
  }

  async knownIdentities(table: string, identities: readonly string[]): Promise<Set<string>> {
    const known = new Set<string>();
    for (let i = 0; i < identities.length; i += 100) {
      let keys: Item[] = [...new Set(identities.slice(i, i + 100))].map((id) => fileKey(table, id));
      for (let attempt = 0; keys.length > 0; attempt++) {
        if (attempt > 0)
          await this.clock.sleep(backoffDelay(UNPROCESSED_BACKOFF, attempt, this.clock.random));
        // BatchGetItem returns throttled keys as UnprocessedKeys: still throttled after every retry, the
        // caller (the backfill step) is retried later, with backoff, by the state machine.
        if (attempt > 8) throw new ThrottledError(`read ledger: ${keys.length} keys left unprocessed`);
        const page = await this.send('read ledger', () =>
          this.doc.send(
            new BatchGetCommand({
              RequestItems: { [this.tableName]: { Keys: keys, ProjectionExpression: 'pk' } },
            }),
          ),
        );
        for (const item of page.Responses?.[this.tableName] ?? []) {
          const parsed = typeof item.pk === 'string' ? parseFilePk(item.pk) : undefined;
          if (parsed) known.add(parsed.identity);
        }
        // Throttled keys come back unprocessed: retried with backoff, as the SDK docs ask.
        keys = (page.UnprocessedKeys?.[this.tableName]?.Keys as Item[] | undefined) ?? [];
      }
    }
    return known;
  }

  async scanFiles(filter: { table?: string; keyPrefix?: string; limit?: number }): Promise<FileEntry[]> {
    const found: FileEntry[] = [];
    const limit = filter.limit ?? 1000;
    const scan = paginateScan(
      { client: this.doc },
      {
        TableName: this.tableName,
        FilterExpression: 'begins_with(pk, :prefix)',
        ExpressionAttributeValues: { ':prefix': filter.table ? `FILE#${filter.table}#` : 'FILE#' },
      },
    );
    for await (const page of this.pages('scan files', scan)) {
      for (const item of page.Items ?? []) {
        const entry = decodeFileEntry(item);
        if (!entry) continue;
        const key = entry.identity.split('#').slice(2).join('#');
        if (filter.keyPrefix && !key.startsWith(filter.keyPrefix)) continue;
        found.push(entry);
        if (found.length >= limit) return found;
      }
    }
    return found;
  }

  async scanSealedIndex(page: { readonly startKey?: SealedIndexKey; readonly limit?: number }): Promise<{
    batches: BatchRecord[];
    nextKey?: SealedIndexKey;
  }> {
    const result = await this.send('scan sealed index', () =>
      this.doc.send(
        new ScanCommand({
          TableName: this.tableName,
          IndexName: SEALED_INDEX.name,
          ExclusiveStartKey: page.startKey,
          Limit: page.limit,
        }),
      ),
    );
    return { batches: (result.Items ?? []).map(decodeBatch), nextKey: result.LastEvaluatedKey };
  }

  async listSealedForCommit(table: string, limit: number): Promise<BatchRecord[]> {
    const found: BatchRecord[] = [];
    // The index also holds COMMITTED batches whose C5 is outstanding; they are filtered out here. Both
    // the page size and the number of pages are bounded, so a long queue of those (an EventBridge outage)
    // costs every commit a few pages, never the whole backlog: group commit only proposes, and a batch the
    // pages did not reach commits on its own request.
    let pages = 0;
    const query = paginateQuery(
      { client: this.doc, pageSize: Math.max(limit, 25) * 2 },
      {
        TableName: this.tableName,
        IndexName: SEALED_INDEX.name,
        KeyConditionExpression: '#p = :table',
        ExpressionAttributeNames: { '#p': SEALED_INDEX.partitionKey },
        ExpressionAttributeValues: { ':table': table },
      },
    );
    for await (const page of this.pages('list sealed for commit', query)) {
      for (const item of page.Items ?? []) {
        const batch = decodeBatch(item);
        if (batch.state === BATCH_STATE.sealed && found.length < limit) found.push(batch);
      }
      if (found.length >= limit || ++pages >= MAX_SEALED_QUERY_PAGES) break;
    }
    return found;
  }
}
