import * as z from '../kernel/zod.ts';
import { InvalidDeltaLogError, type LogPlace } from './errors.ts';

/**
 * The Delta log's actions (delta-io/delta PROTOCOL.md "Actions"), one schema each: the writer builds its
 * commits from these types and every reader decodes commits and checkpoint rows with these schemas.
 *
 * Objects are loose: "clients must ignore such unrecognized fields, and should not produce an error when
 * reading a table that contains unrecognized fields" (PROTOCOL.md "Protocol Evolution"), and a field another
 * writer set on the table's metaData survives this writer's next metaData. Unknown action types (`cdc`,
 * `domainMetadata`, `checkpointMetadata`, a future one) are skipped the same way: what a reader must not skip
 * is announced by the protocol's reader and writer features, which the sink checks before it writes
 * (table-features.ts) and `inlet table` before it counts.
 */

const strings = z.readonly(z.array(z.string()));
const stringMap = z.readonly(z.record(z.string(), z.string()));
/** A `Long` field: JSON numbers here (bigints in a checkpoint, converted before the check). */
const long = z.number();
const optionalLong = z.optional(z.nullable(long));

export const protocolSchema = z.readonly(
  z.looseObject({
    minReaderVersion: z.int(),
    minWriterVersion: z.int(),
    /** Only with reader version 3 / writer version 7 (PROTOCOL.md "Table Features"). */
    readerFeatures: z.optional(strings),
    writerFeatures: z.optional(strings),
  }),
);

export const metaDataSchema = z.readonly(
  z.looseObject({
    id: z.string(),
    name: z.optional(z.nullable(z.string())),
    description: z.optional(z.nullable(z.string())),
    format: z.readonly(z.looseObject({ provider: z.string(), options: z.optional(z.nullable(stringMap)) })),
    schemaString: z.string(),
    partitionColumns: strings,
    configuration: z.optional(z.nullable(stringMap)),
    createdTime: optionalLong,
  }),
);

export const txnSchema = z.readonly(
  z.looseObject({ appId: z.string(), version: long, lastUpdated: optionalLong }),
);

export const addSchema = z.readonly(
  z.looseObject({
    path: z.string(),
    partitionValues: z.readonly(z.record(z.string(), z.nullable(z.string()))),
    size: long,
    modificationTime: long,
    dataChange: z.boolean(),
    stats: z.optional(z.nullable(z.string())),
    tags: z.optional(z.nullable(stringMap)),
  }),
);

export const removeSchema = z.readonly(
  z.looseObject({ path: z.string(), deletionTimestamp: optionalLong, dataChange: z.boolean() }),
);

/** A landing file a commit names: a URL (older sinks wrote `{ url }`). */
const sourceUrls = z.readonly(z.array(z.union([z.string(), z.looseObject({ url: z.optional(z.string()) })])));

/**
 * What this sink records in its commits' `commitInfo` (PROTOCOL.md "Commit Provenance Information":
 * "implementations are free to store any valid JSON-formatted data"), under a key of its own.
 */
export const inletCommitSchema = z.readonly(
  z.looseObject({
    manifestVersion: z.optional(z.int()),
    batchIds: z.optional(strings),
    /** The manifest's files this commit covers, `[from, to)` of `of`; absent: the whole version. */
    sourceFiles: z.optional(z.readonly(z.object({ from: z.int(), to: z.int(), of: z.int() }))),
    rescuedRows: z.optional(z.number()),
    missingSources: z.optional(sourceUrls),
    rewrittenSources: z.optional(sourceUrls),
  }),
);

/** Free-form provenance; only our own key is checked. */
export const commitInfoSchema = z.readonly(z.looseObject({ inlet: z.optional(inletCommitSchema) }));

export type ProtocolAction = z.infer<typeof protocolSchema>;
export type MetaDataAction = z.infer<typeof metaDataSchema>;
export type TxnAction = z.infer<typeof txnSchema>;
export type AddAction = z.infer<typeof addSchema>;
export type RemoveAction = z.infer<typeof removeSchema>;
export type CommitInfoAction = z.infer<typeof commitInfoSchema>;
export type InletCommit = z.infer<typeof inletCommitSchema>;

/** The actions this code reads and writes, each as PROTOCOL.md writes it: one key naming its type. */
export type DeltaAction =
  | { readonly protocol: ProtocolAction }
  | { readonly metaData: MetaDataAction }
  | { readonly txn: TxnAction }
  | { readonly add: AddAction }
  | { readonly remove: RemoveAction }
  | { readonly commitInfo: CommitInfoAction };

/** The actions a checkpoint holds: the reconciled state, without provenance. */
export type StateAction = Exclude<DeltaAction, { readonly commitInfo: CommitInfoAction }>;

const SCHEMAS = {
  protocol: protocolSchema,
  metaData: metaDataSchema,
  txn: txnSchema,
  add: addSchema,
  remove: removeSchema,
  commitInfo: commitInfoSchema,
} as const;

type ActionType = keyof typeof SCHEMAS;
const isKnown = (key: string): key is ActionType => Object.hasOwn(SCHEMAS, key);

/**
 * One action object (a JSON line parsed, or a checkpoint row's action column) checked against its schema;
 * undefined for an action type this code does not know, which a reader skips.
 */
export function decodeAction(place: LogPlace, type: string, value: unknown): DeltaAction | undefined {
  if (!isKnown(type)) return undefined;
  const parsed = SCHEMAS[type].safeParse(value);
  if (!parsed.success)
    throw new InvalidDeltaLogError(place, `not a ${type} action: ${z.issueLines(parsed.error).join('; ')}`);
  return { [type]: parsed.data } as DeltaAction;
}

/**
 * A commit's text (newline-delimited JSON, PROTOCOL.md "Delta Log Entries") into its actions, in order. A
 * line that is not JSON, not an object, or whose action does not match its schema is an
 * `InvalidDeltaLogError` naming the table, version and line; actions of unknown types are left out.
 */
export function parseActions(place: Omit<LogPlace, 'line'>, text: string): DeltaAction[] {
  const actions: DeltaAction[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.trim() === '') continue;
    actions.push(...parseActionLine({ ...place, line: i + 1 }, line));
  }
  return actions;
}

/** One line of a commit (see parseActions): its actions, usually one. */
export function parseActionLine(place: LogPlace, line: string): DeltaAction[] {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw new InvalidDeltaLogError(place, `not JSON: ${(error as Error).message}`, error);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidDeltaLogError(place, 'an action must be a JSON object');
  const actions: DeltaAction[] = [];
  for (const [type, body] of Object.entries(value)) {
    if (body === null) continue;
    const action = decodeAction(place, type, body);
    if (action) actions.push(action);
  }
  return actions;
}

/** A commit's text as PROTOCOL.md writes it: one action per line, each line ending with a newline. */
export function serializeActions(actions: readonly DeltaAction[]): string {
  return `${actions.map((a) => JSON.stringify(a)).join('\n')}\n`;
}
