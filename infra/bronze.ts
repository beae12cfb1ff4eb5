import { join } from 'node:path';
import { ArnFormat, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { GraphWidget, type IWidget, type Metric } from 'aws-cdk-lib/aws-cloudwatch';
import { type IEventBus, Rule } from 'aws-cdk-lib/aws-events';
import { SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import { CfnDatabase } from 'aws-cdk-lib/aws-glue';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import {
  ContextAttribute,
  Schedule,
  ScheduleExpression,
  ScheduleGroup,
  ScheduleTargetInput,
} from 'aws-cdk-lib/aws-scheduler';
import { SqsSendMessage } from 'aws-cdk-lib/aws-scheduler-targets';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { catalogDatabaseName, catalogDatabaseProblem, catalogTableName } from '../shared/bronze/catalog.ts';
import { bronzeLocation } from '../shared/bronze/config.ts';
import { sinkQueueVisibilitySeconds, writeFunctionEnv } from '../shared/config/function-env.ts';
import type { PipelineConfig, TableConfig } from '../shared/config/pipeline-config.ts';
import { batchKey, fileKey, sinkCursorKey, tableKey } from '../shared/ingestion/ledger-keys.ts';
import { mayShareKeys, routedKeys } from '../shared/ingestion/table-overlap.ts';
import { DEFAULTS } from '../shared/kernel/defaults.ts';
import { ConfigError } from '../shared/kernel/errors.ts';
import { BATCH_COMMITTED, EVENT_SOURCE, METRIC, type MetricName, SERVICE } from '../shared/kernel/names.ts';
import { projectRoot } from '../shared/kernel/project-root.ts';
import { parseS3Prefix } from '../shared/kernel/s3-url.ts';
import { LAMBDA_BUNDLING } from './functions.ts';
import { nagResource } from './nag.ts';
import { serviceMetric } from './service-metric.ts';
import type { StatefulResources } from './stateful.ts';

export interface BronzeSinkProps {
  readonly state: StatefulResources;
  readonly config: PipelineConfig;
  readonly eventBus: IEventBus;
  readonly logRetention: RetentionDays;
  /** @default Duration.seconds(DEFAULTS.sink.timeoutSeconds), 15 minutes */
  readonly timeout?: Duration;
  /**
   * @default DEFAULTS.sink.memoryMb, 512 (a part's files held between its passes, 64 MiB at most, a data file being built, at most
   * maxFileBytes (32 MiB by default) grown to about twice that, and one row group)
   */
  readonly memorySize?: number;
  /** @default catalogDatabaseName(stack name): `<stack>_bronze` */
  readonly catalogDatabase?: string;
}

/**
 * The Delta Lake sink, deployed only when a table has `bronze` (docs/bronze.md). `BatchCommitted` events of
 * each bronze table reach a FIFO queue with that table as the message group, so one sink runs per table at a
 * time; the sink's cursor in the ledger, not the events, decides which versions it writes.
 */
export class BronzeSink extends Construct {
  readonly fn: NodejsFunction;
  readonly queue: Queue;
  /** The sink queue's redrive DLQ (FIFO, as a FIFO queue's DLQ must be). */
  readonly dlq: Queue;
  /**
   * Where the `BatchCommitted` rules put an event they could not deliver to the sink queue. Standard: an
   * EventBridge rule target's DLQ cannot be FIFO (PutTargets: "SQS FIFO is not supported by Dead Letter
   * Queues").
   */
  readonly eventsDlq: Queue;
  readonly timeout: Duration;
  /** The sink queue's visibility timeout: how long a message whose run failed waits for its retry. */
  readonly retryAfter: Duration;
  /** The Glue database of the catalogued bronze tables; undefined when no table has `catalog`. */
  readonly catalogDatabase: string | undefined;
  /** Whether some table keeps symlink manifests (`symlinkManifest`, for Redshift Spectrum). */
  readonly symlinkManifests: boolean;

  /** A BronzeSink when some table asks for one, else undefined (nothing deployed). */
  static maybe(scope: Construct, id: string, props: BronzeSinkProps): BronzeSink | undefined {
    return props.config.tables.some((t) => t.bronze) ? new BronzeSink(scope, id, props) : undefined;
  }

  constructor(scope: Construct, id: string, props: BronzeSinkProps) {
    super(scope, id);
    const { state, config } = props;
    const timeout = props.timeout ?? Duration.seconds(DEFAULTS.sink.timeoutSeconds);
    this.timeout = timeout;
    // Six times the function timeout, as Lambda asks of a queue it polls, so a run is never received twice.
    this.retryAfter = Duration.seconds(sinkQueueVisibilitySeconds(timeout.toSeconds()));
    const encrypted = { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true };
    const queueDefaults = { ...encrypted, fifo: true };
    this.dlq = new Queue(this, 'SinkDlq', {
      ...queueDefaults,
      retentionPeriod: Duration.days(DEFAULTS.queueRetentionDays),
    });
    // https://docs.aws.amazon.com/eventbridge/latest/userguide/rule-dlq.html: "EventBridge DLQs are standard
    // Amazon SQS queues". A lost trigger costs at most one nudge period (the schedule below), but it is
    // still a delivery failure an operator should see.
    this.eventsDlq = new Queue(this, 'SinkEventsDlq', {
      ...encrypted,
      retentionPeriod: Duration.days(DEFAULTS.queueRetentionDays),
    });
    const catalogued = config.tables.filter((t) => t.bronze?.catalog);
    this.symlinkManifests = config.tables.some((t) => t.bronze?.symlinkManifest);
    this.catalogDatabase =
      catalogued.length === 0
        ? undefined
        : (props.catalogDatabase ?? catalogDatabaseName(Stack.of(this).stackName));
    const databaseProblem = this.catalogDatabase && catalogDatabaseProblem(this.catalogDatabase);
    if (databaseProblem) throw new ConfigError([databaseProblem]);
    // Created here, the tables in it by the sink (after each table's first commit: an entry before the
    // table's log exists would be a table no engine can open). Retained with the stack's data by default.
    const database =
      this.catalogDatabase === undefined
        ? undefined
        : new CfnDatabase(this, 'CatalogDatabase', {
            catalogId: Stack.of(this).account,
            databaseInput: {
              name: this.catalogDatabase,
              description: 'Inlet bronze tables (Delta Lake), registered by the bronze sink',
            },
          });
    this.queue = new Queue(this, 'SinkQueue', {
      ...queueDefaults,
      // Events differ in id and time, so this only drops the sink's own repeated nudges; duplicates are harmless.
      contentBasedDeduplication: true,
      visibilityTimeout: this.retryAfter,
      retentionPeriod: Duration.days(DEFAULTS.queueRetentionDays),
      deadLetterQueue: { queue: this.dlq, maxReceiveCount: DEFAULTS.maxReceiveCount },
    });
    this.fn = new NodejsFunction(this, 'Sink', {
      entry: join(projectRoot, 'functions', 'sink.ts'),
      projectRoot,
      depsLockFilePath: join(projectRoot, 'package-lock.json'),
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? DEFAULTS.sink.memoryMb,
      timeout,
      environment: writeFunctionEnv.sink({
        config,
        ledgerTable: state.ledger.tableName,
        manifestBucket: state.manifestBucket.bucketName,
        sinkQueueUrl: this.queue.queueUrl,
        sinkTimeoutSeconds: timeout.toSeconds(),
        // The database's Ref (its name), so the function is created after it.
        glueDatabase: database?.ref,
      }),
      logGroup: new LogGroup(this, 'SinkLogs', { retention: props.logRetention }),
      bundling: LAMBDA_BUNDLING,
    });
    this.fn.addEventSource(new SqsEventSource(this.queue, { batchSize: 10, reportBatchItemFailures: true }));

    const bronzeTables = config.tables.filter((t) => t.bronze);
    for (const table of bronzeTables) {
      new Rule(this, `Committed-${table.name}`, {
        eventBus: props.eventBus,
        eventPattern: {
          source: [EVENT_SOURCE],
          detailType: [BATCH_COMMITTED],
          detail: { table: [table.name] },
        },
        // EventBridge takes a fixed group id per target: one rule per table gives each table its own group.
        targets: [new SqsQueue(this.queue, { messageGroupId: table.name, deadLetterQueue: this.eventsDlq })],
      });
    }

    this.scheduleNudges(bronzeTables);

    const wildcards: string[] = [];
    const allow = (actions: string[], resources: string[], conditions?: Record<string, unknown>) => {
      wildcards.push(...resources.filter((r) => r.endsWith('*')));
      this.fn.addToRolePolicy(new PolicyStatement({ actions, resources, conditions }));
    };
    // Written: the cursor items only. The sink never writes the protocol's FILE/BATCH/TABLE items.
    allow(['dynamodb:GetItem', 'dynamodb:PutItem'], [state.ledger.tableArn], {
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [sinkCursorKey('*').pk] },
    });
    // The table's committed head, read for the lag metric when a run stops short; never written.
    allow(['dynamodb:GetItem'], [state.ledger.tableArn], {
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [tableKey('*').pk] },
    });
    // cleanSource removes a file only once every other table routing it holds it: their claims and batches,
    // read, of exactly those tables.
    const sharing = [
      ...new Set(bronzeTables.flatMap((t) => (t.bronze?.cleanSource ? tablesSharing(t, config) : []))),
    ];
    if (sharing.length > 0)
      allow(['dynamodb:GetItem'], [state.ledger.tableArn], {
        'ForAllValues:StringLike': {
          'dynamodb:LeadingKeys': sharing.flatMap((name) => [fileKey(name, '*').pk, batchKey(name, '*').pk]),
        },
      });
    allow(
      ['s3:GetObject'],
      bronzeTables.map((t) => state.manifestBucket.arnForObjects(`${t.name}/_manifests/*`)),
    );
    // Every catch-up ends by reading the manifest after the last one, which does not exist yet: S3 answers a
    // GET of a missing key with 404 only to a caller that may list the bucket, else 403 (GetObject,
    // Permissions). Unconditional: AWS does not document which key an `s3:prefix` condition would be matched
    // against for that check, and a GET carries no prefix parameter (the committer's grant, for the same
    // reason).
    allow(['s3:ListBucket'], [state.manifestBucket.bucketArn]);
    const bucketArnOf = (name: string) =>
      Stack.of(this).formatArn({ service: 's3', region: '', account: '', resource: name });
    const landingOf = (table: { readonly bucket?: string }) =>
      table.bucket ? bucketArnOf(table.bucket) : state.landingBucket.bucketArn;
    // Landing files, only under the bronze tables' prefixes: routing puts a table's files under its prefix
    // (a reprocess target is a table over the same prefix). ListBucket so a deleted file reads as 404
    // (without it S3 answers 403).
    allow(
      ['s3:GetObject', 's3:GetObjectVersion'],
      [...new Set(bronzeTables.map((t) => `${landingOf(t)}/${t.prefix}*`))],
    );
    allow(['s3:ListBucket'], [...new Set(bronzeTables.map(landingOf))]);
    for (const { name, bronze } of config.tables.flatMap((t) =>
      t.bronze ? [{ name: t.name, bronze: t.bronze }] : [],
    )) {
      const { bucket, prefix } = bronzeLocation(name, bronze, state.manifestBucket.bucketName);
      const bucketArn = bronze.location
        ? Stack.of(this).formatArn({ service: 's3', region: '', account: '', resource: bucket })
        : state.manifestBucket.bucketArn;
      // AbortMultipartUpload: a checkpoint is streamed as a multipart upload, dropped when its writing fails.
      allow(
        ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload'],
        [`${bucketArn}/${prefix === '' ? '' : `${prefix}/`}*`],
      );
      if (bronze.location) allow(['s3:ListBucket'], [bucketArn]);
    }
    this.expireNoncurrentDeltaVersions(state, bronzeTables);
    if (database) {
      // GetTable, CreateTable, UpdateTable are each authorized on the catalog, the database and the table
      // (https://docs.aws.amazon.com/glue/latest/dg/glue-specifying-resource-arns.html): exactly the
      // catalogued tables' names, never a wildcard, so the sink cannot touch another table of the database.
      const glueArn = (resource: string) =>
        Stack.of(this).formatArn({ service: 'glue', resource, arnFormat: ArnFormat.NO_RESOURCE_NAME });
      allow(
        ['glue:GetTable', 'glue:CreateTable', 'glue:UpdateTable'],
        [
          glueArn('catalog'),
          glueArn(`database/${database.ref}`),
          ...catalogued.map((t) => glueArn(`table/${database.ref}/${catalogTableName(t.name)}`)),
        ],
      );
    }
    // cleanSource: delete (and, for move, write the archive) only under the tables that ask for it.
    for (const table of bronzeTables) {
      const clean = table.bronze?.cleanSource;
      if (!clean) continue;
      const landingArn = landingOf(table);
      allow(['s3:DeleteObject', 's3:DeleteObjectVersion'], [`${landingArn}/${table.prefix}*`]);
      if (clean.moveTo) {
        const to = parseS3Prefix(clean.moveTo);
        // PutObject covers CopyObject and a multipart copy's create, part copies and complete (a file over
        // 5 GB); Abort frees a failed one's parts. Reading the source is the landing grant above.
        // Tags: a CopyObject copies a tagged source's tags (read there, written here), and a multipart move
        // reads them itself (of the manifest's version when it names one) and sets them on the create.
        allow(['s3:GetObjectTagging', 's3:GetObjectVersionTagging'], [`${landingArn}/${table.prefix}*`]);
        allow(
          ['s3:PutObject', 's3:PutObjectTagging', 's3:AbortMultipartUpload'],
          [`${bucketArnOf(to.bucket)}/${to.prefix === '' ? '' : `${to.prefix}/`}*`],
        );
      }
    }
    this.queue.grantSendMessages(this.fn);
    for (const resource of wildcards) {
      Validations.of(this.fn).acknowledge({
        id: `AwsSolutions-IAM5[Resource::${nagResource(Stack.of(this).resolve(resource))}]`,
        reason:
          "Objects under a Delta table root, a table's manifests or a landing bucket: the narrowest scope S3 offers.",
      });
    }
    Validations.of(this.dlq).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: 'It is the dead-letter queue of the sink queue.',
    });
    Validations.of(this.eventsDlq).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: "It is the dead-letter queue of the sink's EventBridge rule targets.",
    });
  }

  /**
   * The manifest bucket is versioned (manifests are the protocol's record), so every object the sink
   * overwrites or a user VACUUMs under a Delta table kept there (the default location) stays as a billed
   * noncurrent version. Databricks recommends against versioning Delta buckets, or else a lifecycle rule
   * keeping versions 7 days or less (https://docs.databricks.com/aws/delta/s3-limitations); Delta readers
   * never read a noncurrent version (time travel is the log's). Only on a bucket this stack creates: an
   * imported one, or a `location` elsewhere, is its owner's to configure (docs/deploy.md).
   */
  private expireNoncurrentDeltaVersions(state: StatefulResources, tables: PipelineConfig['tables']): void {
    if (!(state.manifestBucket instanceof Bucket)) return;
    for (const table of tables) {
      if (!table.bronze || table.bronze.location) continue;
      const { prefix } = bronzeLocation(table.name, table.bronze, state.manifestBucket.bucketName);
      state.manifestBucket.addLifecycleRule({
        id: `bronze-${table.name}-noncurrent`,
        prefix: `${prefix}/`,
        noncurrentVersionExpiration: Duration.days(7),
        expiredObjectDeleteMarker: true,
      });
    }
  }

  /** One of the sink's metrics (namespace `Inlet`, `service = inlet-sink`, docs/bronze.md "Metrics"). */
  metric(name: MetricName, statistic = 'Sum', period = Duration.minutes(1)): Metric {
    return serviceMetric(SERVICE.sink, name, statistic, period);
  }

  /** The sink's row of the pipeline dashboard (infra/monitoring.ts places it): output, then lag. */
  widgets(): IWidget[] {
    const m = (name: MetricName, statistic?: string) => this.metric(name, statistic);
    return [
      new GraphWidget({
        title: 'Bronze sink: versions, files',
        left: [
          m(METRIC.sinkVersions),
          m(METRIC.sinkDataFiles),
          m(METRIC.sinkFilesCleaned),
          m(METRIC.sinkFilesLeft),
        ],
        right: [m(METRIC.sinkDataBytes)],
        width: 8,
      }),
      new GraphWidget({
        title: 'Bronze sink: rows, missing landing files, catalog and manifest errors',
        left: [m(METRIC.sinkRows), m(METRIC.sinkRescued), m(METRIC.sinkSourcesMissing)],
        right: [m(METRIC.sinkCatalogErrors), m(METRIC.sinkManifestErrors)],
        width: 8,
      }),
      new GraphWidget({
        title: 'Bronze sink: versions behind, oldest message (s)',
        left: [m(METRIC.sinkBehind, 'Maximum')],
        right: [
          this.queue.metricApproximateAgeOfOldestMessage({
            period: Duration.minutes(1),
            statistic: 'Maximum',
          }),
        ],
        width: 8,
      }),
    ];
  }

  /**
   * A sink run only starts when a message for its table arrives: a commit's event or the sink's own nudge. If
   * the last of those is lost (dead-lettered, or the rule's delivery failed), the Delta table stays behind the
   * manifests, and cleanSource waits, until the table's next commit, which on an idle table may never come.
   * So each bronze table is also nudged on a schedule (EventBridge Scheduler, which AWS recommends over
   * scheduled rules), into the same FIFO group as its events. The body carries the scheduled time: each firing
   * is its own message under the queue's content-based deduplication, and a retried send of one firing (same
   * body) is dropped as SQS drops any duplicate within 5 minutes.
   */
  private scheduleNudges(tables: PipelineConfig['tables']): void {
    const scheduled = tables.flatMap((t) =>
      t.bronze && t.bronze.nudgeEveryMinutes > 0 ? [{ name: t.name, every: t.bronze.nudgeEveryMinutes }] : [],
    );
    if (scheduled.length === 0) return;
    // Its own group: the role the schedules assume trusts this group only, not the account's default one.
    // Destroyed with the stack: retained, its generated name would block the stack's next creation.
    const group = new ScheduleGroup(this, 'NudgeSchedules', { removalPolicy: RemovalPolicy.DESTROY });
    for (const { name, every } of scheduled) {
      new Schedule(this, `Nudge-${name}`, {
        scheduleGroup: group,
        schedule: ScheduleExpression.rate(Duration.minutes(every)),
        description: `Nudges the bronze sink of table ${name} so an idle table catches up and cleans`,
        target: new SqsSendMessage(this.queue, {
          messageGroupId: name,
          input: ScheduleTargetInput.fromObject({ table: name, scheduledAt: ContextAttribute.scheduledTime }),
          // A nudge older than the next one is worth nothing: the next firing replaces it.
          maxEventAge: Duration.minutes(every),
          retryAttempts: 3,
        }),
      });
    }
  }
}

/** The other live tables that can route `table`'s files (shared/ingestion/table-overlap.ts, as the config checks). */
function tablesSharing(table: TableConfig, config: PipelineConfig): string[] {
  return config.tables
    .filter((other) => other !== table && other.live && mayShareKeys(routedKeys(table), routedKeys(other)))
    .map((other) => other.name);
}
