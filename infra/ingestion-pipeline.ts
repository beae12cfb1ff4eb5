import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { EventBus, type IEventBus, Rule } from 'aws-cdk-lib/aws-events';
import { SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Bucket, EventType } from 'aws-cdk-lib/aws-s3';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { type PipelineConfig, parsePipelineConfig } from '../shared/config/pipeline-config.ts';
import { DEFAULTS } from '../shared/kernel/defaults.ts';
import { BackfillWorkflow } from './backfill.ts';
import { BronzeSink } from './bronze.ts';
import { BronzeMaintenance } from './bronze-maintenance.ts';
import { PipelineFunctions } from './functions.ts';
import { allowAlarmsToPublish, Monitoring } from './monitoring.ts';
import {
  type EventMode,
  type IngestionPipelineProps,
  knownBuckets,
  notificationPrefixes,
  toTableConfigs,
  validatePipelineProps,
} from './props.ts';
import { AccountScopedQueueDestination } from './queue-destination.ts';
import { StatefulResources } from './stateful.ts';

/**
 * Exactly-once ingestion of S3 files into versioned manifests: landing bucket -> ingest queue -> batcher
 * (DynamoDB claim ledger) -> FIFO commit queue -> committer -> `<table>/_manifests/<version>.json`.
 * @example
 * new IngestionPipeline(this, 'Inlet', { tables: [{ name: 'orders', prefix: 'orders/' }] });
 */
export class IngestionPipeline extends Construct {
  readonly state: StatefulResources;
  readonly functions: PipelineFunctions;
  readonly monitoring: Monitoring;
  /** The backfill state machine, and the reconcile schedule when configured. */
  readonly backfill: BackfillWorkflow;
  /** The Delta Lake sink; only when a table has `bronze`. */
  readonly bronze?: BronzeSink;
  /** The bronze tables' scheduled optimize and vacuum; unless every bronze table turns it off. */
  readonly maintenance?: BronzeMaintenance;
  readonly alarmTopic: ITopic;
  readonly eventBus: IEventBus;
  readonly eventMode: EventMode;
  /** Events the EventBridge rule could not deliver to the ingest queue (eventbridge mode only). */
  readonly eventsDlq?: Queue;
  readonly config: PipelineConfig;

  constructor(scope: Construct, id: string, props: IngestionPipelineProps) {
    super(scope, id);
    const problems = validatePipelineProps(props);
    if (problems.length > 0)
      throw new Error(`IngestionPipeline '${id}' has invalid props:\n- ${problems.join('\n- ')}`);

    const batcherTimeout = props.batcherTimeout ?? Duration.seconds(DEFAULTS.batcherTimeoutSeconds);
    const committerTimeout = props.committerTimeout ?? Duration.seconds(DEFAULTS.committerTimeoutSeconds);
    const lease = props.leaseDuration ?? Duration.seconds(DEFAULTS.leaseSeconds);
    const logRetention = props.logRetention ?? RetentionDays.ONE_MONTH;
    this.config = parsePipelineConfig(
      {
        tables: toTableConfigs(props.tables),
        ignoreGlobs: [...(props.ignoreGlobs ?? DEFAULTS.ignoreGlobs)],
        leaseSeconds: lease.toSeconds(),
      },
      // The bronze cross-table checks compare bucket names: only names known at synth count.
      knownBuckets(props),
    );
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    this.state = new StatefulResources(this, 'State', {
      landingBucket: props.landingBucket,
      manifestBucket: props.manifestBucket,
      removalPolicy,
      // CloudFormation cannot delete a protected table: DESTROY must mean `cdk destroy` succeeds.
      deletionProtection: removalPolicy !== RemovalPolicy.DESTROY && (props.deletionProtection ?? true),
      versionLanding: this.config.tables.some((t) => t.allowOverwrites),
      batcherTimeout,
      committerTimeout,
      ledgerCapacity: props.ledgerCapacity,
    });
    this.eventBus = props.eventBus ?? EventBus.fromEventBusName(this, 'DefaultBus', 'default');
    this.alarmTopic = props.alarmTopic ?? new Topic(this, 'Alarms', { enforceSSL: true });
    allowAlarmsToPublish(this.alarmTopic);
    const imported = props.landingBucket !== undefined;
    this.eventMode = props.eventMode ?? (imported ? 'eventbridge' : 's3-notifications');
    // EventBridge drops an event it cannot deliver after its retries (24 hours at most): keep it here instead.
    this.eventsDlq =
      this.eventMode === 'eventbridge'
        ? new Queue(this, 'EventsDlq', {
            encryption: QueueEncryption.SQS_MANAGED,
            enforceSSL: true,
            retentionPeriod: Duration.days(DEFAULTS.queueRetentionDays),
          })
        : undefined;
    if (this.eventsDlq) {
      Validations.of(this.eventsDlq).acknowledge({
        id: 'AwsSolutions-SQS3',
        reason:
          "It is the EventBridge rule target's dead-letter queue; cdk-nag recognises only SQS redrive policies.",
      });
    }
    this.functions = new PipelineFunctions(this, 'Functions', {
      state: this.state,
      config: this.config,
      eventBus: this.eventBus,
      batchSize: props.batchSize ?? DEFAULTS.batchSize,
      batchingWindow: props.batchingWindow ?? Duration.seconds(DEFAULTS.batchingWindowSeconds),
      maxConcurrency: props.maxConcurrency ?? DEFAULTS.maxConcurrency,
      batcherTimeout,
      committerTimeout,
      sweepInterval: props.sweepInterval ?? Duration.minutes(DEFAULTS.sweepIntervalMinutes),
      logRetention,
      backfill: {
        recordsPerMessage: props.backfill?.recordsPerMessage ?? DEFAULTS.backfill.recordsPerMessage,
        pagesPerStep: props.backfill?.pagesPerStep ?? DEFAULTS.backfill.pagesPerStep,
        stepsPerExecution: props.backfill?.stepsPerExecution ?? DEFAULTS.backfill.stepsPerExecution,
        inventoryBuckets: props.backfill?.inventoryBuckets ?? [],
      },
    });
    this.backfill = new BackfillWorkflow(this, 'Backfill', {
      fn: this.functions.backfill,
      logRetention,
      ...(props.reconcile
        ? {
            reconcile: {
              ...props.reconcile,
              tables: props.reconcile.tables ?? this.config.tables.filter((t) => t.live).map((t) => t.name),
            },
          }
        : {}),
    });
    this.bronze = BronzeSink.maybe(this, 'Bronze', {
      state: this.state,
      config: this.config,
      eventBus: this.eventBus,
      logRetention,
      memorySize: props.bronzeSink?.memorySize,
      timeout: props.bronzeSink?.timeout,
      catalogDatabase: props.bronzeSink?.catalogDatabase,
    });
    this.monitoring = new Monitoring(this, 'Monitoring', {
      state: this.state,
      alarmTopic: this.alarmTopic,
      maxMessageAge: props.maxMessageAge ?? Duration.minutes(DEFAULTS.maxMessageAgeMinutes),
      reconcile: props.reconcile !== undefined,
      functions: this.functions,
      stateMachine: this.backfill.stateMachine,
      eventsDlq: this.eventsDlq,
      sink: this.bronze,
    });
    this.maintenance = BronzeMaintenance.maybe(this, 'Maintenance', {
      state: this.state,
      config: this.config,
      logRetention,
    });
    if (this.maintenance) {
      this.monitoring.alarms.push(...this.maintenance.alarms(this.alarmTopic));
      this.monitoring.dashboard.addWidgets(...this.maintenance.widgets());
    }

    const prefixes = notificationPrefixes(props.tables);
    if (this.eventMode === 's3-notifications') {
      const destination = new AccountScopedQueueDestination(this.state.ingestQueue);
      for (const prefix of prefixes) {
        this.state.landingBucket.addEventNotification(
          EventType.OBJECT_CREATED,
          destination,
          ...(prefix ? [{ prefix }] : []),
        );
      }
    } else {
      if (this.state.landingBucket instanceof Bucket)
        this.state.landingBucket.enableEventBridgeNotification();
      new Rule(this, 'ObjectCreated', {
        eventPattern: {
          source: ['aws.s3'],
          detailType: ['Object Created'],
          detail: {
            bucket: { name: [this.state.landingBucket.bucketName] },
            ...(prefixes[0] === '' ? {} : { object: { key: prefixes.map((prefix) => ({ prefix })) } }),
          },
        },
        targets: [new SqsQueue(this.state.ingestQueue, { deadLetterQueue: this.eventsDlq })],
      });
    }
  }
}
