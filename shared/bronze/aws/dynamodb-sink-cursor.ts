import { ConditionalCheckFailedException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { cleanCursorKey, sinkCursorKey, tableKey } from '../../ingestion/ledger-keys.ts';
import { classifyAwsError } from '../../kernel/errors.ts';
import type { ManifestHeads, SinkCursor, SinkCursorStore } from '../ports.ts';

/**
 * The cursor as an item. No schema: it lives in the Delta log's metaData, and a schema of thousands of
 * columns would pass DynamoDB's 400 KB item limit and stop the cursor for good.
 */
export function cursorItem(cursor: SinkCursor): Record<string, unknown> {
  return {
    manifestVersion: cursor.manifestVersion,
    filesDone: cursor.filesDone,
    deltaVersion: cursor.deltaVersion,
    location: cursor.location,
    rows: cursor.rows,
    rescued: cursor.rescued,
    partFiles: cursor.partFiles,
    catalogued: cursor.catalogued,
  };
}

/**
 * An item as a cursor. One written before manifest versions were kept (one commit per version, manifest
 * version v at Delta version v-1) reads as that: its table continues where it is, its schema attribute is
 * ignored and dropped by the next advance.
 */
export function cursorFromItem(table: string, item: Record<string, unknown> | undefined): SinkCursor {
  if (!item) return { table, manifestVersion: 0, filesDone: 0, deltaVersion: -1, rows: 0, rescued: 0 };
  const deltaVersion = item.deltaVersion as number;
  return {
    table,
    manifestVersion: (item.manifestVersion as number | undefined) ?? deltaVersion + 1,
    filesDone: (item.filesDone as number | undefined) ?? 0,
    deltaVersion,
    ...(typeof item.location === 'string' ? { location: item.location } : {}),
    rows: (item.rows as number | undefined) ?? 0,
    rescued: (item.rescued as number | undefined) ?? 0,
    ...(typeof item.partFiles === 'number' ? { partFiles: item.partFiles } : {}),
    ...(typeof item.catalogued === 'number' ? { catalogued: item.catalogued } : {}),
  };
}

export class DynamoDbSinkCursorStore implements SinkCursorStore, ManifestHeads {
  private readonly doc: DynamoDBDocumentClient;
  private readonly tableName: string;

  constructor(options: { readonly client: DynamoDBClient; readonly tableName: string }) {
    this.doc = DynamoDBDocumentClient.from(options.client, {
      marshallOptions: { removeUndefinedValues: true },
    });
    this.tableName = options.tableName;
  }

  async get(table: string): Promise<SinkCursor> {
    try {
      const { Item } = await this.doc.send(
        new GetCommand({ TableName: this.tableName, Key: sinkCursorKey(table), ConsistentRead: true }),
      );
      return cursorFromItem(table, Item);
    } catch (error) {
      throw classifyAwsError('read sink cursor', error);
    }
  }

  /** The ledger's `TABLE#<table>` head: a read of the protocol's item, which the sink never writes. */
  async committedHead(table: string): Promise<number> {
    try {
      const { Item } = await this.doc.send(
        new GetCommand({
          TableName: this.tableName,
          Key: tableKey(table),
          ProjectionExpression: '#head',
          ExpressionAttributeNames: { '#head': 'head' },
        }),
      );
      return (Item?.head as number | undefined) ?? 0;
    } catch (error) {
      throw classifyAwsError('read table head', error);
    }
  }

  async advance(from: SinkCursor, to: SinkCursor): Promise<boolean> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...sinkCursorKey(to.table), ...cursorItem(to) },
          // Two sinks on one table (a redelivery overlapping a slow run) move the cursor once per commit. The
          // item may exist before the first commit (a part-size hint), still at Delta version -1.
          ConditionExpression: 'attribute_not_exists(pk) OR deltaVersion = :from',
          ExpressionAttributeValues: { ':from': from.deltaVersion },
        }),
      );
      return true;
    } catch (error) {
      if (
        error instanceof ConditionalCheckFailedException ||
        (error as Error).name === 'ConditionalCheckFailedException'
      )
        return false;
      throw classifyAwsError('advance sink cursor', error);
    }
  }

  async getCleaned(table: string): Promise<number> {
    try {
      const { Item } = await this.doc.send(
        new GetCommand({ TableName: this.tableName, Key: cleanCursorKey(table), ConsistentRead: true }),
      );
      return (Item?.cleanedVersion as number | undefined) ?? 0;
    } catch (error) {
      throw classifyAwsError('read clean cursor', error);
    }
  }

  async advanceCleaned(table: string, from: number, to: number): Promise<boolean> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...cleanCursorKey(table), cleanedVersion: to },
          // Same race as the sink cursor: two overlapping runs move it once.
          ConditionExpression: from === 0 ? 'attribute_not_exists(pk)' : 'cleanedVersion = :from',
          ExpressionAttributeValues: from === 0 ? undefined : { ':from': from },
        }),
      );
      return true;
    } catch (error) {
      if ((error as Error).name === 'ConditionalCheckFailedException') return false;
      throw classifyAwsError('advance clean cursor', error);
    }
  }
}
