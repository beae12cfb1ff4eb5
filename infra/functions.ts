import { join } from 'node:path';
import { type CfnElement, Duration, Stack, Validations } from 'aws-cdk-lib';
import { type IEventBus, Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Architecture, type IFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct, type IConstruct } from 'constructs';
import { writeFunctionEnv } from '../shared/config/function-env.ts';
import type { PipelineConfig } from '../shared/config/pipeline-config.ts';
import { SEALED_INDEX } from '../shared/ingestion/ledger-keys.ts';
import { DEFAULTS } from '../shared/kernel/defaults.ts';
import { METRICS_NAMESPACE, SERVICE } from '../shared/kernel/names.ts';
import { projectRoot } from '../shared/kernel/project-root.ts';
import { checkEnvironmentSize } from './environment-size.ts';
import { LAMBDA_ALIASES, LAMBDA_ESBUILD } from './lambda-esbuild.ts';
import type { StatefulResources } from './stateful.ts';

/** A bucket's ARN in the stack's partition (aws, aws-cn, aws-us-gov). */
const bucketArn = (scope: Construct, bucket: string) =>
  Stack.of(scope).formatArn({ service: 's3', region: '', account: '', resource: bucket });

/**
 * How every Inlet function is bundled: local esbuild (run from the project root, where the aliases' paths
 * start), ESM for nodejs22.x, minified, with source maps (LAMBDA_ESBUILD, the bench's too).
 */
export const LAMBDA_BUNDLING = {
  format: OutputFormat.ESM,
  target: LAMBDA_ESBUILD.target,
  minify: LAMBDA_ESBUILD.minify,
  sourceMap: true,
  // The SDK is bundled (pinned, the version the tests ran), not taken from the runtime.
  externalModules: [],
  mainFields: [...LAMBDA_ESBUILD.mainFields],
  banner: LAMBDA_ESBUILD.banner,
  esbuildArgs: { '--alias': Object.entries(LAMBDA_ALIASES).map(([name, path]) => `${name}=${path}`) },
};
export { METRICS_NAMESPACE, SERVICE };

export interface PipelineFunctionsProps {
  readonly state: StatefulResources;
  readonly config: PipelineConfig;
  readonly eventBus: IEventBus;
  readonly batchSize: number;
  readonly batchingWindow: Duration;
  readonly maxConcurrency: number;
  readonly batcherTimeout: Duration;
  readonly committerTimeout: Duration;
  readonly sweepInterval: Duration;
  readonly logRetention: RetentionDays;
  /** Backfill tuning (infra/props.ts `backfill`). */
  readonly backfill: {
    readonly recordsPerMessage: number;
    readonly pagesPerStep: number;
    readonly stepsPerExecution: number;
    /** Buckets S3 Inventory reports are delivered to: the function reads their objects. */
    readonly inventoryBuckets: readonly string[];
  };
}

/** The stateless half: three functions, their event sources, schedule and least-privilege grants. */
export class PipelineFunctions extends Construct {
  readonly batcher: NodejsFunction;
  readonly committer: NodejsFunction;
  readonly sweeper: NodejsFunction;
  /** Plan and step tasks of the backfill state machine (infra/backfill.ts). */
  readonly backfill: NodejsFunction;

  constructor(scope: Construct, id: string, props: PipelineFunctionsProps) {
    super(scope, id);
    const { state } = props;
    // Each function gets exactly what its runtime reads (FUNCTION_ENV), nothing another function needs.
    const common = { config: props.config, ledgerTable: state.ledger.tableName };
    const make = (
      name: keyof typeof SERVICE,
      memorySize: number,
      timeout: Duration,
      environment: Record<string, string>,
    ) =>
      new NodejsFunction(this, name[0]?.toUpperCase() + name.slice(1), {
        // From the project root, not this file's folder: the same path works from source and from a build.
        entry: join(projectRoot, 'functions', `${name}.ts`),
        projectRoot,
        depsLockFilePath: join(projectRoot, 'package-lock.json'),
        runtime: Runtime.NODEJS_22_X,
        architecture: Architecture.ARM_64,
        memorySize,
        timeout,
        environment,
        logGroup: new LogGroup(this, `${name}Logs`, { retention: props.logRetention }),
        bundling: LAMBDA_BUNDLING,
      });

    this.batcher = make(
      'batcher',
      1024,
      props.batcherTimeout,
      writeFunctionEnv.batcher({
        ...common,
        manifestBucket: state.manifestBucket.bucketName,
        commitQueueUrl: state.commitQueue.queueUrl,
      }),
    );
    this.committer = make(
      'committer',
      512,
      props.committerTimeout,
      writeFunctionEnv.committer({
        ...common,
        manifestBucket: state.manifestBucket.bucketName,
        eventBus: props.eventBus.eventBusName,
      }),
    );
    this.sweeper = make(
      'sweeper',
      256,
      Duration.seconds(DEFAULTS.sweeper.timeoutSeconds),
      writeFunctionEnv.sweeper({
        ...common,
        commitQueueUrl: state.commitQueue.queueUrl,
        sweepIntervalSeconds: props.sweepInterval.toSeconds(),
      }),
    );
    this.backfill = make(
      'backfill',
      1024,
      Duration.seconds(DEFAULTS.backfill.timeoutSeconds),
      writeFunctionEnv.backfill({
        ...common,
        landingBucket: state.landingBucket.bucketName,
        ingestQueueUrl: state.ingestQueue.queueUrl,
        recordsPerMessage: props.backfill.recordsPerMessage,
        pagesPerStep: props.backfill.pagesPerStep,
        stepsPerExecution: props.backfill.stepsPerExecution,
      }),
    );

    this.batcher.addEventSource(
      new SqsEventSource(state.ingestQueue, {
        batchSize: props.batchSize,
        maxBatchingWindow: props.batchSize > 10 ? props.batchingWindow : undefined,
        reportBatchItemFailures: true,
        // MaximumConcurrency, never reserved concurrency: reserved + SQS throttles messages into the DLQ.
        maxConcurrency: props.maxConcurrency,
      }),
    );
    this.committer.addEventSource(
      new SqsEventSource(state.commitQueue, {
        batchSize: 10,
        reportBatchItemFailures: true,
        // Per table serial (FIFO group = table), across tables parallel: on a FIFO queue Lambda runs at most
        // one batch per message group at a time, and min(active groups, this) invocations in all.
        // https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html
        maxConcurrency: 10,
      }),
    );
    new Rule(this, 'SweepSchedule', {
      schedule: Schedule.rate(props.sweepInterval),
      targets: [new LambdaFunction(this.sweeper, { retryAttempts: 2 })],
    });

    const ledgerArn = state.ledger.tableArn;
    const allow = (fn: IFunction, actions: string[], resources: string[]) =>
      fn.addToRolePolicy(new PolicyStatement({ actions, resources }));
    // Batcher: claim, owner look-up, takeover transaction, seal, quarantine; stage lists; request commits.
    allow(this.batcher, ['dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem'], [ledgerArn]);
    allow(this.batcher, ['s3:PutObject'], [state.manifestBucket.arnForObjects('_staging/*')]);
    state.commitQueue.grantSendMessages(this.batcher);
    // Committer: batch/table reads, reservation and commit transactions; staged lists and manifests; events.
    // BatchGetItem: an invocation reads its requests' batches at once, so a backlog's requests that an
    // earlier group committed cost no read each (shared/ingestion/settled-batches.ts).
    allow(
      this.committer,
      ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'],
      [ledgerArn],
    );
    // Delete: the committer removes a batch's staged list once the batch is COMMITTED (never before: the
    // lifecycle rule no longer expires current staged lists).
    allow(
      this.committer,
      ['s3:GetObject', 's3:DeleteObject'],
      [state.manifestBucket.arnForObjects('_staging/*')],
    );
    allow(
      this.committer,
      ['s3:PutObject', 's3:GetObject'],
      [state.manifestBucket.arnForObjects('*/_manifests/*')],
    );
    // S3 answers GetObject of a missing key with 403 unless the caller may list the bucket, and the committer
    // reads keys that are often absent (manifest h+1 before reserving; a staged list deleted by a racer).
    // Unconditional: a GetObject request carries no `s3:prefix`, so a prefix-conditioned grant would not count.
    allow(this.committer, ['s3:ListBucket'], [state.manifestBucket.bucketArn]);
    // Group commit: a table's other waiting batches, from the sealed index (one Query per commit). Without
    // it every commit is refused the Query, logs "sealed index unreadable" and commits its batch alone.
    allow(this.committer, ['dynamodb:Query'], [`${ledgerArn}/index/${SEALED_INDEX.name}`]);
    props.eventBus.grantPutEventsTo(this.committer);
    // Sweeper: the sealed index (scanned, so tables no longer configured are finished too) and table heads;
    // re-requests commits. No Query: it reads the index only by Scan (the IAM check's mutation run found an
    // index-wide Query grant no sweep ever used).
    allow(this.sweeper, ['dynamodb:Scan'], [`${ledgerArn}/index/${SEALED_INDEX.name}`]);
    allow(this.sweeper, ['dynamodb:GetItem'], [ledgerArn]);
    state.commitQueue.grantSendMessages(this.sweeper);
    // Backfill: list the buckets its tables read, look claims up (never write them), enqueue.
    const buckets = [
      state.landingBucket.bucketArn,
      ...new Set(props.config.tables.flatMap((t) => (t.bucket ? [bucketArn(this, t.bucket)] : []))),
    ];
    allow(this.backfill, ['s3:ListBucket', 's3:ListBucketVersions'], buckets);
    allow(this.backfill, ['dynamodb:BatchGetItem'], [ledgerArn]);
    state.ingestQueue.grantSendMessages(this.backfill);
    // Inventory backfills read manifest.json and its CSV.gz data files, which S3 writes under
    // <destination prefix>/<source bucket>/<configuration id>/ of the destination bucket: objects only,
    // no listing (the manifest names every data file).
    const inventoryObjects = [...new Set(props.backfill.inventoryBuckets)].map(
      (bucket) => `${bucketArn(this, bucket)}/*`,
    );
    if (inventoryObjects.length > 0) allow(this.backfill, ['s3:GetObject'], inventoryObjects);

    for (const [name, fn] of Object.entries({
      Batcher: this.batcher,
      Committer: this.committer,
      Sweeper: this.sweeper,
      Backfill: this.backfill,
    })) {
      checkEnvironmentSize(fn, name, props.config);
    }

    // The object-prefix and index wildcards above are the narrowest scopes S3 and DynamoDB offer.
    const ref = (resource: IConstruct) =>
      Stack.of(this).resolve((resource.node.defaultChild as CfnElement).logicalId) as string;
    const manifests = ref(state.manifestBucket);
    const staging = `<${manifests}.Arn>/_staging/*`;
    const manifestObjects = `<${manifests}.Arn>/*/_manifests/*`;
    // The key of a report is dated per delivery: the objects of the inventory bucket are its narrowest scope.
    const inventories = [...new Set(props.backfill.inventoryBuckets)].map(
      (bucket) => `arn:<AWS::Partition>:s3:::${bucket}/*`,
    );
    for (const [fn, resources] of [
      [this.batcher, [staging]],
      [this.committer, [staging, manifestObjects]],
      [this.backfill, inventories],
    ] as const) {
      for (const resource of resources) {
        Validations.of(fn).acknowledge({
          id: `AwsSolutions-IAM5[Resource::${resource}]`,
          reason:
            'Objects under one prefix (staged lists, manifests, inventory reports): the narrowest scope the service offers.',
        });
      }
    }
  }
}
