import { ConditionalCheckFailedException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { classifyAwsError } from '../errors.ts';
import { tableKey } from '../ledger/keys.ts';
import type { ManifestHeads, SinkCursor, SinkCursorStore } from './ports.ts';
import type { TableSchema } from './schema.ts';

/** `SINK#<table>`: the bronze sink's cursor, in the ledger table beside `TABLE#<table>`. */
export const sinkCursorKey = (table: string) => ({ pk: `SINK#${table}`, sk: 'S' });
/** cleanSource's cursor: its own item, so the sink's full-item put of `S` never overwrites it. */
export const cleanCursorKey = (table: string) => ({ pk: `SINK#${table}`, sk: 'C' });

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
      if (!Item) return { table, deltaVersion: -1, rows: 0, rescued: 0 };
      return {
        table,
        deltaVersion: Item.deltaVersion as number,
        schema: Item.schema ? (JSON.parse(Item.schema as string) as TableSchema) : undefined,
        rows: (Item.rows as number | undefined) ?? 0,
        rescued: (Item.rescued as number | undefined) ?? 0,
      };
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
          Item: {
            ...sinkCursorKey(to.table),
            deltaVersion: to.deltaVersion,
            schema: to.schema ? JSON.stringify(to.schema) : undefined,
            rows: to.rows,
            rescued: to.rescued,
          },
          // Two sinks on one table (a redelivery overlapping a slow run) move the cursor once per version.
          ConditionExpression: from.deltaVersion < 0 ? 'attribute_not_exists(pk)' : 'deltaVersion = :from',
          ExpressionAttributeValues: from.deltaVersion < 0 ? undefined : { ':from': from.deltaVersion },
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
