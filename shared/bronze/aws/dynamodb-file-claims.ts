import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { batchKey, fileKey } from '../../ingestion/ledger-keys.ts';
import { BATCH_STATE } from '../../ingestion/model.ts';
import { classifyAwsError } from '../../kernel/errors.ts';
import type { FileClaims } from '../ports.ts';

/** Committed batches never change version: remembered (up to this many) so a version's files read each once. */
const REMEMBERED_BATCHES = 10_000;

/**
 * Another table's claim of a landing file, read from the ledger (docs/protocol.md, "Items"): its `FILE` item
 * names the batch, the batch's `BATCH` item its state and version. Eventually consistent reads: a stale
 * answer says "not committed yet", which only makes cleanSource wait for the next run.
 */
export class DynamoDbFileClaims implements FileClaims {
  private readonly doc: DynamoDBDocumentClient;
  private readonly versions = new Map<string, number>();

  constructor(private readonly options: { readonly client: DynamoDBClient; readonly tableName: string }) {
    this.doc = DynamoDBDocumentClient.from(options.client);
  }

  async committedVersion(table: string, identity: string): Promise<number | undefined> {
    const file = await this.get(fileKey(table, identity), 'read file claim');
    const batchId = file?.batchId as string | undefined;
    if (!batchId) return undefined;
    const remembered = this.versions.get(`${table}#${batchId}`);
    if (remembered !== undefined) return remembered;
    const batch = await this.get(batchKey(table, batchId), 'read batch');
    if (batch?.state !== BATCH_STATE.committed || typeof batch.version !== 'number') return undefined;
    if (this.versions.size >= REMEMBERED_BATCHES) this.versions.clear();
    this.versions.set(`${table}#${batchId}`, batch.version);
    return batch.version;
  }

  private async get(key: { pk: string; sk: string }, what: string) {
    try {
      const { Item } = await this.doc.send(new GetCommand({ TableName: this.options.tableName, Key: key }));
      return Item;
    } catch (error) {
      throw classifyAwsError(what, error);
    }
  }
}
