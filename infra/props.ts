import { type Duration, type RemovalPolicy, Token } from 'aws-cdk-lib';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { KeyTimeInput } from '../shared/backfill/key-time.ts';
import type { BronzeConfigInput } from '../shared/bronze/config.ts';
import { type TableConfig, tableConfigSchema, tableProblems } from '../shared/config/pipeline-config.ts';
import { DEFAULTS } from '../shared/kernel/defaults.ts';
import { type LedgerCapacity, ledgerCapacityProblems } from './ledger-capacity.ts';

export type EventMode = 's3-notifications' | 'eventbridge';

/** One target table: its files, by bucket key filters. */
export interface InletTableProps {
  /** Manifest prefix and ledger namespace: 1-63 of a-z, 0-9, _ and -. */
  readonly name: string;
  /** @default '' (the whole bucket) */
  readonly prefix?: string;
  /** @default no suffix filter */
  readonly suffix?: string;
  /** picomatch glob over the whole key. @default no glob filter */
  readonly glob?: string;
  /** A rewritten object (new versionId / eTag) is a new file. @default false */
  readonly allowOverwrites?: boolean;
  /**
   * Live S3 events feed the table. `false`: only backfills do, e.g. the new table of a reprocess.
   * @default true
   */
  readonly live?: boolean;
  /**
   * Also land each committed version in a Delta Lake table (docs/bronze.md): a sink function is deployed
   * for this table only. @default no Delta table
   */
  readonly bronze?: BronzeConfigInput;
  /**
   * The keys carry their write time, e.g. `{ pattern: 'orders/dt=YYYY-MM-DD/' }` (tokens YYYY, MM, DD, HH,
   * UTC, coarsest first; the pattern starts with `prefix`): reconcile lists only the prefixes its window can
   * touch instead of the whole table prefix (docs/operations.md). @default reconcile lists the whole prefix
   */
  readonly keyTime?: KeyTimeInput;
}

export interface IngestionPipelineProps {
  /**
   * The bucket files land in. @default a new bucket (encrypted, SSL only, no public access; versioned when a
   * table has `allowOverwrites`)
   */
  readonly landingBucket?: IBucket;
  /**
   * The imported `landingBucket` has versioning enabled (CDK cannot see an imported bucket's settings).
   * Required for `allowOverwrites`: only a versionId tells two writes of one key apart in a manifest.
   * @default false
   */
  readonly landingBucketVersioned?: boolean;
  /** The tables to ingest into; a file may match several. */
  readonly tables: readonly InletTableProps[];
  /**
   * How S3 events reach the ingest queue. `eventbridge` needs EventBridge notifications turned on for the
   * bucket, and avoids CDK's bucket-notification custom resource (it rewrites an imported bucket's whole
   * notification configuration and S3 rejects overlapping prefixes).
   * @default 's3-notifications' for a created bucket, 'eventbridge' for an imported one
   */
  readonly eventMode?: EventMode;
  /** Lambda batch size for the batcher, 1-10,000. @default 1000 */
  readonly batchSize?: number;
  /** Lambda batching window, up to 5 minutes; required above 10 records. @default Duration.seconds(20) */
  readonly batchingWindow?: Duration;
  /** Most concurrent batcher invocations (SQS MaximumConcurrency), 2-1000. @default 20 */
  readonly maxConcurrency?: number;
  /** How long a claim blocks other batchers; must exceed the batcher timeout. @default Duration.minutes(10) */
  readonly leaseDuration?: Duration;
  /** Batcher timeout. @default Duration.minutes(5) */
  readonly batcherTimeout?: Duration;
  /** Committer timeout; the commit queue's visibility timeout is 6x. @default Duration.minutes(1) */
  readonly committerTimeout?: Duration;
  /** Where manifests and staged lists go. @default a new versioned bucket */
  readonly manifestBucket?: IBucket;
  /** For the ledger and created buckets. @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * DynamoDB deletion protection on the ledger. `removalPolicy: DESTROY` turns it off whatever this says:
   * CloudFormation cannot delete a protected table, so `cdk destroy` would fail half-way.
   * @default true (false with RemovalPolicy.DESTROY)
   */
  readonly deletionProtection?: boolean;
  /**
   * The ledger's capacity: on-demand, or provisioned with auto scaling (`{ mode: 'provisioned', writeUnits,
   * readUnits, targetUtilizationPercent }`), cheaper at a steady rate (docs/performance.md, "A provisioned
   * ledger"). @default { mode: 'on-demand' }
   */
  readonly ledgerCapacity?: LedgerCapacity;
  /** Where alarms go. @default a new SNS topic */
  readonly alarmTopic?: ITopic;
  /** Lambda log retention. @default RetentionDays.ONE_MONTH */
  readonly logRetention?: RetentionDays;
  /** Bus for `BatchCommitted` events. @default the account's default bus */
  readonly eventBus?: IEventBus;
  /** How often the sweeper looks for stalled batches and reservations. @default Duration.minutes(5) */
  readonly sweepInterval?: Duration;
  /** Keys never ingested. @default ['**\/_temporary/**', '**\/*.tmp', '**\/.*'] */
  readonly ignoreGlobs?: readonly string[];
  /**
   * Alarm when the oldest ingest (or commit) message stays older than this for 5 minutes running. Retries
   * are routine (a busy or throttled message comes back after up to a few minutes), so this sits well above
   * a handful of short retries.
   * @default Duration.minutes(30)
   */
  readonly maxMessageAge?: Duration;
  /** Backfill state machine tuning. */
  readonly backfill?: BackfillProps;
  /** The bronze sink function, deployed when a table has `bronze` (docs/bronze.md). */
  readonly bronzeSink?: BronzeSinkFunctionProps;
  /**
   * Scheduled reconcile: list a recent window and enqueue files the ledger never saw (lost S3 events).
   * @default off
   */
  readonly reconcile?: ReconcileProps;
}

export interface BronzeSinkFunctionProps {
  /**
   * Sink memory, which also sets its CPU share: parsing and Parquet encoding are CPU-bound, so more memory
   * writes a part faster (128-10,240 MB). @default 512
   */
  readonly memorySize?: number;
  /** Sink timeout; its queue's visibility timeout is 6x. @default Duration.minutes(15) */
  readonly timeout?: Duration;
  /**
   * The AWS Glue database the stack creates for its bronze tables (those with `catalog`, the default):
   * lowercase letters, digits and `_`. @default `<stack name>_bronze`, lowercased, other characters as `_`
   */
  readonly catalogDatabase?: string;
}

export interface BackfillProps {
  /** Files per SQS message a backfill sends (1-100); the batcher claims each. @default 10 */
  readonly recordsPerMessage?: number;
  /** S3 listing pages (1,000 keys each) per step. @default 20 */
  readonly pagesPerStep?: number;
  /** Steps before an execution continues as a new one (history stays under 25,000 events). @default 1000 */
  readonly stepsPerExecution?: number;
  /**
   * Buckets S3 Inventory reports are delivered to (the inventory configuration's destination): the backfill
   * function may read their objects (`s3:GetObject`: manifest.json and the CSV.gz data files), and only these
   * buckets', so `inventory` inputs must name a manifest in one of them. Reports encrypted with SSE-KMS also
   * need `kms:Decrypt` on the key, which is not granted here. @default none (inventory backfills are refused
   * by S3 with AccessDenied)
   */
  readonly inventoryBuckets?: readonly string[];
}

export interface ReconcileProps {
  /** How often. */
  readonly every: Duration;
  /** How far back each run looks; longer than `every` so runs overlap. @default 2 x every + settle */
  readonly lookback?: Duration;
  /** Files younger than this are left to their live events. @default Duration.minutes(15) */
  readonly settle?: Duration;
  /** @default every live table */
  readonly tables?: readonly string[];
}

/** S3's general purpose bucket naming rules, in short: a name, never an ARN, URL or key. */
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** Every problem with the props, at once (empty when they are fine). */
export function validatePipelineProps(props: IngestionPipelineProps): string[] {
  const problems: string[] = [];
  if (props.tables.length === 0) problems.push('tables: at least one table is required');
  const names = new Set<string>();
  props.tables.forEach((table, i) => {
    const parsed = tableConfigSchema.safeParse(table);
    const issues = parsed.success
      ? tableProblems(parsed.data)
      : parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    for (const issue of issues) problems.push(`tables[${i}].${issue}`);
    if (names.has(table.name)) problems.push(`tables[${i}].name: duplicate table name '${table.name}'`);
    names.add(table.name);
  });
  const batchSize = props.batchSize ?? DEFAULTS.batchSize;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000)
    problems.push('batchSize: must be 1-10,000');
  const windowSeconds = props.batchingWindow?.toSeconds() ?? DEFAULTS.batchingWindowSeconds;
  if (windowSeconds > 300) problems.push('batchingWindow: at most 5 minutes');
  if (batchSize > 10 && windowSeconds < 1)
    problems.push('batchingWindow: Lambda requires at least 1 second when batchSize > 10');
  const maxConcurrency = props.maxConcurrency ?? DEFAULTS.maxConcurrency;
  if (!Number.isInteger(maxConcurrency) || maxConcurrency < 2 || maxConcurrency > 1000) {
    problems.push('maxConcurrency: must be 2-1000 (SQS event source MaximumConcurrency)');
  }
  const timeout = props.batcherTimeout?.toSeconds() ?? DEFAULTS.batcherTimeoutSeconds;
  if (timeout > 900) problems.push('batcherTimeout: at most 15 minutes');
  const sinkTimeout = props.bronzeSink?.timeout?.toSeconds();
  // A run keeps its last minute back (no part starts in it): less than two minutes leaves it nothing.
  const shortest = 2 * DEFAULTS.sink.lastStartSeconds;
  if (sinkTimeout !== undefined && (sinkTimeout < shortest || sinkTimeout > 900))
    problems.push(`bronzeSink.timeout: ${shortest / 60} to 15 minutes`);
  const sinkMemory = props.bronzeSink?.memorySize;
  if (
    sinkMemory !== undefined &&
    !(Number.isInteger(sinkMemory) && sinkMemory >= 128 && sinkMemory <= 10_240)
  )
    problems.push('bronzeSink.memorySize: 128-10,240 MB');
  if ((props.committerTimeout?.toSeconds() ?? DEFAULTS.committerTimeoutSeconds) > 900)
    problems.push('committerTimeout: at most 15 minutes');
  const perMessage = props.backfill?.recordsPerMessage ?? DEFAULTS.backfill.recordsPerMessage;
  if (!Number.isInteger(perMessage) || perMessage < 1 || perMessage > 100)
    problems.push('backfill.recordsPerMessage: must be 1-100');
  const steps = props.backfill?.stepsPerExecution ?? DEFAULTS.backfill.stepsPerExecution;
  if (!Number.isInteger(steps) || steps < 1 || steps > 2000)
    problems.push('backfill.stepsPerExecution: must be 1-2000 (25,000 history events per execution)');
  for (const bucket of props.backfill?.inventoryBuckets ?? []) {
    if (!Token.isUnresolved(bucket) && !BUCKET_NAME.test(bucket))
      problems.push(
        `backfill.inventoryBuckets: '${bucket}' is not a bucket name (3-63 of a-z, 0-9, . and -; no s3:// or key)`,
      );
  }
  if (props.reconcile) {
    for (const name of props.reconcile.tables ?? []) {
      if (!props.tables.some((t) => t.name === name))
        problems.push(`reconcile.tables: '${name}' is not a configured table`);
    }
    const every = props.reconcile.every.toSeconds();
    const lookback = props.reconcile.lookback?.toSeconds();
    const settle = props.reconcile.settle?.toSeconds() ?? DEFAULTS.reconcileSettleMinutes * 60;
    if (every < 60) problems.push('reconcile.every: at least 1 minute');
    if (lookback !== undefined && lookback <= every + settle)
      problems.push('reconcile.lookback: must exceed every + settle, or files fall between two runs');
  }
  problems.push(...bucketProblems(props));
  problems.push(...ledgerCapacityProblems(props.ledgerCapacity));
  const lease = props.leaseDuration?.toSeconds() ?? DEFAULTS.leaseSeconds;
  if (lease <= timeout)
    problems.push(
      `leaseDuration (${lease}s) must exceed batcherTimeout (${timeout}s), or live batchers get fenced`,
    );
  return problems;
}

export function toTableConfigs(tables: readonly InletTableProps[]): TableConfig[] {
  return tables.map((t) => tableConfigSchema.parse(t));
}

/**
 * The fewest S3 notification prefixes that cover every table: S3 rejects overlapping prefixes for one event
 * type, so 'a/' and 'a/b/' become 'a/', and any table on the whole bucket makes it one unfiltered rule.
 */
export function notificationPrefixes(tables: readonly { readonly prefix?: string }[]): string[] {
  const prefixes = [...new Set(tables.map((t) => t.prefix ?? ''))].sort();
  if (prefixes.includes('')) return [''];
  return prefixes.filter((p, i) => !prefixes.slice(0, i).some((q) => p.startsWith(q)));
}

/** Key prefixes Inlet writes into the manifest bucket (shared/ingestion/manifest.ts), a bronze table's default root too. */
function writtenPrefixes(table: InletTableProps): string[] {
  const bronze = table.bronze && !table.bronze.location ? [`${table.name}/_bronze/`] : [];
  return ['_staging/', `${table.name}/_manifests/`, ...bronze];
}

/** The landing and manifest bucket names known at synth (imported by name), for the config's bronze checks. */
export function knownBuckets(props: IngestionPipelineProps): {
  landingBucket?: string;
  manifestBucket?: string;
} {
  const name = (bucket: IBucket | undefined) =>
    bucket && !Token.isUnresolved(bucket.bucketName) ? bucket.bucketName : undefined;
  return { landingBucket: name(props.landingBucket), manifestBucket: name(props.manifestBucket) };
}

const overlaps = (a: string, b: string) => a.startsWith(b) || b.startsWith(a);

function sameBucket(a: IBucket | undefined, b: IBucket | undefined): boolean {
  if (!a || !b) return false;
  if (a === b) return true;
  return !Token.isUnresolved(a.bucketName) && a.bucketName === b.bucketName;
}

/** The landing bucket's settings the tables depend on. */
function bucketProblems(props: IngestionPipelineProps): string[] {
  const problems: string[] = [];
  if (sameBucket(props.landingBucket, props.manifestBucket)) {
    // A table that sees Inlet's own staged lists or manifests ingests them, writes more, and loops forever.
    const written = props.tables.flatMap((t) => writtenPrefixes(t));
    for (const table of props.tables) {
      const prefix = table.prefix ?? '';
      const hit = written.find((w) => overlaps(prefix, w));
      if (hit !== undefined)
        problems.push(
          `manifestBucket: is the landing bucket, and table '${table.name}' (prefix '${prefix}') would ingest Inlet's own '${hit}' objects in a loop; use another bucket or a table prefix that does not cover them`,
        );
    }
  }
  const overwriting = props.tables.filter((t) => t.allowOverwrites).map((t) => `'${t.name}'`);
  if (overwriting.length > 0 && props.landingBucket && !props.landingBucketVersioned) {
    problems.push(
      `allowOverwrites (tables ${overwriting.join(', ')}): needs a landing bucket with versioning enabled (manifests name each write by versionId). Enable versioning on the imported bucket and set landingBucketVersioned: true (cdk context inlet:landingBucketVersioned), or turn allowOverwrites off`,
    );
  }
  return problems;
}
