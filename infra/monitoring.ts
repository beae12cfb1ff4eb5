import { ArnFormat, Aws, Duration, Stack } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { METRIC, type MetricName, SERVICE } from '../shared/kernel/names.ts';
import type { BronzeSink } from './bronze.ts';
import type { PipelineFunctions } from './functions.ts';
import { serviceMetric } from './service-metric.ts';
import type { StatefulResources } from './stateful.ts';

export interface MonitoringProps {
  readonly state: StatefulResources;
  readonly alarmTopic: ITopic;
  readonly maxMessageAge: Duration;
  /** A reconcile schedule is on: alarm when it finds files the ledger never saw. */
  readonly reconcile: boolean;
  readonly functions: PipelineFunctions;
  readonly stateMachine: IStateMachine;
  /** The EventBridge rule's dead-letter queue, in eventbridge mode. */
  readonly eventsDlq?: IQueue;
  /** The bronze sink, when a table has `bronze`: charted and alarmed like the other functions. */
  readonly sink?: BronzeSink;
}

/**
 * A topic policy that exists at all (CDK writes one for `enforceSSL`) replaces SNS's default policy, which
 * was what let CloudWatch publish: without this statement every alarm notification is refused. Scoped to
 * alarms of this account so no other account's alarm (or service) can publish here.
 */
export function allowAlarmsToPublish(topic: ITopic): void {
  const alarms = Stack.of(topic).formatArn({
    service: 'cloudwatch',
    resource: 'alarm',
    resourceName: '*',
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
  topic.addToResourcePolicy(
    new PolicyStatement({
      sid: 'AllowCloudWatchAlarmsOfThisAccount',
      principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: {
        StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
        ArnLike: { 'aws:SourceArn': alarms },
      },
    }),
  );
}

/** Dashboard and alarms over the Powertools (EMF) metrics and the queues. */
export class Monitoring extends Construct {
  readonly dashboard: Dashboard;
  readonly alarms: Alarm[] = [];
  private readonly alarmTopic: ITopic;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    this.alarmTopic = props.alarmTopic;
    const { state } = props;
    const m = (service: string, name: MetricName, statistic?: string) =>
      serviceMetric(service, name, statistic);
    const batcher = (name: MetricName, statistic?: string) => m(SERVICE.batcher, name, statistic);
    const committer = (name: MetricName, statistic?: string) => m(SERVICE.committer, name, statistic);
    const sweeper = (name: MetricName) => m(SERVICE.sweeper, name);
    const backfill = (name: MetricName) => m(SERVICE.backfill, name);
    const { sink } = props;

    const dlqDepth = (label: string, metric: IMetric) => ({ label, metric });
    const ingestDlq = state.ingestDlq.metricApproximateNumberOfMessagesVisible({
      period: Duration.minutes(1),
      statistic: 'Maximum',
    });
    const commitDlq = state.commitDlq.metricApproximateNumberOfMessagesVisible({
      period: Duration.minutes(1),
      statistic: 'Maximum',
    });
    const sinkDlq = sink?.dlq.metricApproximateNumberOfMessagesVisible({
      period: Duration.minutes(1),
      statistic: 'Maximum',
    });
    const sinkEventsDlq = sink?.eventsDlq.metricApproximateNumberOfMessagesVisible({
      period: Duration.minutes(1),
      statistic: 'Maximum',
    });
    const oldest = state.ingestQueue.metricApproximateAgeOfOldestMessage({
      period: Duration.minutes(1),
      statistic: 'Maximum',
    });

    this.dashboard = new Dashboard(this, 'Dashboard', {
      widgets: [
        [
          new GraphWidget({
            title: 'Files',
            left: [
              batcher(METRIC.filesClaimed),
              committer(METRIC.filesCommitted),
              batcher(METRIC.duplicates),
            ],
            width: 12,
          }),
          new GraphWidget({
            title: 'Ingestion lag and commit latency (ms)',
            left: [committer(METRIC.ingestionLag, 'p99'), committer(METRIC.commitLatency, 'p99')],
            width: 12,
          }),
        ],
        [
          new GraphWidget({
            title: 'Batch size',
            left: [batcher(METRIC.batchSize, 'Average'), batcher(METRIC.batchSize, 'Maximum')],
            width: 8,
          }),
          new GraphWidget({
            title: 'DLQ depth',
            left: [
              dlqDepth('ingest', ingestDlq).metric,
              dlqDepth('commit', commitDlq).metric,
              ...(sinkDlq ? [dlqDepth('sink', sinkDlq).metric] : []),
              ...(sinkEventsDlq ? [dlqDepth('sink events', sinkEventsDlq).metric] : []),
            ],
            width: 8,
          }),
          new GraphWidget({ title: 'Oldest ingest message (s)', left: [oldest], width: 8 }),
        ],
        [
          new GraphWidget({
            title: 'Trouble',
            left: [
              committer(METRIC.commitErrors),
              batcher(METRIC.quarantined),
              batcher(METRIC.takeovers),
              batcher(METRIC.fenced),
              sweeper(METRIC.stalePending),
              sweeper(METRIC.staleBatches),
              ...(sink
                ? [
                    sink.metric(METRIC.sinkErrors),
                    sink.metric(METRIC.sinkCleanErrors),
                    sink.metric(METRIC.sinkCatalogErrors),
                    sink.metric(METRIC.sinkManifestErrors),
                  ]
                : []),
            ],
            width: 24,
          }),
        ],
        [
          new GraphWidget({
            title: 'Backfill and reconcile',
            left: [
              backfill(METRIC.backfillListed),
              backfill(METRIC.backfillEnqueued),
              backfill(METRIC.backfillAlreadyIngested),
              backfill(METRIC.reconcileListed),
              backfill(METRIC.reconcileMissing),
            ],
            width: 24,
          }),
        ],
        ...(sink ? [sink.widgets()] : []),
      ],
    });

    this.alarm(
      'IngestDlqNotEmpty',
      ingestDlq,
      1,
      'Ingest messages failed 10 times: files not ingested until redriven (inlet dlq redrive).',
    );
    this.alarm(
      'CommitDlqNotEmpty',
      commitDlq,
      1,
      'A commit request failed 10 times: its table is stuck (see CommitErrors).',
    );
    // Five minutes running, not one datapoint: a busy or throttled message is retried after a short
    // visibility timeout (tens of seconds to a few minutes), so a handful of routine retries ages the oldest
    // message by up to ~15 minutes while the queue is otherwise healthy. The default threshold (30 minutes)
    // held for five consecutive minutes leaves room for that, and still catches a pipeline falling behind
    // (or a message that keeps failing: the DLQ alarm catches those after 10 receives).
    this.alarm(
      'OldestMessageAge',
      oldest,
      props.maxMessageAge.toSeconds(),
      'Ingestion is falling behind the landing rate (retries alone stay under this).',
      5,
    );
    this.alarm(
      'CommitQueueOldestMessageAge',
      state.commitQueue.metricApproximateAgeOfOldestMessage({
        period: Duration.minutes(1),
        statistic: 'Maximum',
      }),
      props.maxMessageAge.toSeconds(),
      "Commit requests are waiting: a table's FIFO group is blocked or the committer is failing.",
      5,
    );
    const fiveMinutes = { period: Duration.minutes(5), statistic: 'Sum' };
    for (const [name, fn] of [
      ['Batcher', props.functions.batcher],
      ['Committer', props.functions.committer],
      ['Sweeper', props.functions.sweeper],
      ['Backfill', props.functions.backfill],
      ...(sink ? [['Sink', sink.fn] as const] : []),
    ] as const) {
      this.alarm(
        `${name}Errors`,
        fn.metricErrors(fiveMinutes),
        1,
        `The ${name.toLowerCase()} threw or timed out: its whole batch or run failed (see its logs).`,
      );
      this.alarm(
        `${name}Throttles`,
        fn.metricThrottles(fiveMinutes),
        1,
        `Lambda throttled the ${name.toLowerCase()}: the account's concurrency is exhausted.`,
      );
    }
    this.alarm(
      'BackfillExecutionsFailed',
      props.stateMachine.metricFailed(fiveMinutes),
      1,
      'A backfill, reprocess or reconcile run failed: its output names the last key done (resume with startAfter).',
    );
    if (props.eventsDlq) {
      this.alarm(
        'EventsDlqNotEmpty',
        props.eventsDlq.metricApproximateNumberOfMessagesVisible({
          period: Duration.minutes(1),
          statistic: 'Maximum',
        }),
        1,
        'EventBridge could not deliver S3 events to the ingest queue: those files are not ingested until their events are re-sent or a backfill runs.',
      );
    }
    this.alarm(
      'CommitErrors',
      committer(METRIC.commitErrors),
      1,
      'The committer failed; a ManifestConflictError means a fork was refused.',
    );
    this.alarm(
      'VersionPendingTooLong',
      sweeper(METRIC.stalePending),
      1,
      'A reserved version waited longer than the sweep interval.',
    );
    this.alarm(
      'SealedBatchStalled',
      sweeper(METRIC.staleBatches),
      1,
      'A sealed batch waited longer than the sweep interval for its commit.',
    );
    if (sink && sinkDlq && sinkEventsDlq) this.sinkAlarms(sink, sinkDlq, sinkEventsDlq, props.maxMessageAge);
    if (props.reconcile) {
      this.alarm(
        'ReconcileFoundMissing',
        backfill(METRIC.reconcileMissing),
        1,
        'Reconcile found files the ledger never saw (lost S3 events) and enqueued them: check the notification setup.',
      );
    }
  }
  /** An alarm to the topic when `metric` >= `threshold` in `consecutivePeriods` periods running. */
  private alarm(
    name: string,
    metric: IMetric,
    threshold: number,
    description: string,
    consecutivePeriods = 1,
  ) {
    const a = new Alarm(this, name, {
      metric,
      threshold,
      evaluationPeriods: consecutivePeriods,
      datapointsToAlarm: consecutivePeriods > 1 ? consecutivePeriods : undefined,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription: description,
    });
    a.addAlarmAction(new SnsAction(this.alarmTopic));
    this.alarms.push(a);
  }

  /** The bronze sink's: its DLQ, its queue's age past a failed run's retry, and its lag. */
  private sinkAlarms(sink: BronzeSink, dlq: IMetric, eventsDlq: IMetric, maxMessageAge: Duration): void {
    this.alarm(
      'SinkDlqNotEmpty',
      dlq,
      1,
      'Bronze sink messages dead-lettered: a Delta table has stopped (failOnNewColumns, a foreign commit; see the sink logs).',
    );
    this.alarm(
      'SinkEventsDlqNotEmpty',
      eventsDlq,
      1,
      "EventBridge could not deliver a BatchCommitted event to the sink queue: that table's Delta version waits for the next commit or its nudge schedule (nudgeEveryMinutes; with the schedule off, until the next commit).",
    );
    // A run whose message fails is retried after the queue's visibility timeout (six sink timeouts), and the
    // retry may itself run a whole timeout: one failure ages the oldest message to at most their sum. Held 5
    // minutes past that means the group is failing again and again, or nothing consumes the queue. A sink
    // that is only behind is the falling-behind alarm's (an hour), which fires first.
    this.alarm(
      'SinkQueueOldestMessageAge',
      sink.queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(1), statistic: 'Maximum' }),
      Math.max(maxMessageAge.toSeconds(), sink.retryAfter.toSeconds() + sink.timeout.toSeconds()),
      "A bronze table's sink messages wait past a failed run's retry: its FIFO group keeps failing or the sink is not consuming (see SinkErrors and the sink logs).",
      5,
    );
    // A clean that fails is retried by the next run (each commit, and the nudge schedule every 15 minutes by
    // default): failing in every quarter hour for an hour is a setting to fix (a denied delete, Object Lock,
    // KMS, a missing moveTo bucket), not a passing error. The files stay; nothing else is affected.
    this.alarm(
      'SinkCleanFailing',
      sink.metric(METRIC.sinkCleanErrors, 'Sum', Duration.minutes(15)),
      1,
      "cleanSource has failed in every quarter hour for an hour (SinkCleanErrors): landing files are not being deleted or moved. The sink's log says why ('cleanSource failed'): a denied delete, Object Lock, a KMS key, a missing moveTo bucket.",
      4,
    );
    // The Glue entry is a projection of the log: a run that cannot bring it in step (Glue failing or
    // refusing, the name another table's) is logged and retried by the next run (each commit, the nudge
    // every 15 minutes), and the Delta table is unaffected. Failing in every quarter hour for an hour is a
    // cause to fix, not a passing error: Athena and Redshift Spectrum see a stale or missing table meanwhile.
    if (sink.catalogDatabase !== undefined)
      this.alarm(
        'SinkCatalogFailing',
        sink.metric(METRIC.sinkCatalogErrors, 'Sum', Duration.minutes(15)),
        1,
        `The bronze sink has failed to bring a table's Glue Data Catalog entry (database ${sink.catalogDatabase}) in step in every quarter hour for an hour (SinkCatalogErrors): Athena and Redshift Spectrum see a stale or missing table. The sink's log says which and why ('bronze catalog update failed', 'bronze catalog table name taken by another table'); the Delta tables are not affected.`,
        4,
      );
    // The same for the symlink manifests: a run that cannot write them is logged and retried, and vacuum
    // waits for them, so failing for an hour means Spectrum reads an older version and the small files stay.
    if (sink.symlinkManifests)
      this.alarm(
        'SinkManifestsFailing',
        sink.metric(METRIC.sinkManifestErrors, 'Sum', Duration.minutes(15)),
        1,
        "The bronze sink has failed to write a table's symlink manifests (_symlink_format_manifest/, for Redshift Spectrum) in every quarter hour for an hour (SinkManifestErrors): Spectrum reads an older version meanwhile, and vacuum deletes nothing until they are written. The sink's log says which and why ('bronze symlink manifests not written; the next run repairs them'); the Delta tables are not affected.",
        4,
      );
    // A run only reports versions behind when it used its whole time budget and stopped short (a run that
    // catches up reports 0). Some run stopping short in each quarter hour for an hour means the sink has been
    // writing flat out and still not caught up: it is not keeping up with the commits.
    this.alarm(
      'SinkFallingBehind',
      sink.metric(METRIC.sinkBehind, 'Maximum', Duration.minutes(15)),
      1,
      "The bronze sink has stopped short of the manifest head in every quarter hour for an hour (SinkVersionsBehind). Which tables: Logs Insights on the sink's log group, filter message = 'bronze sink behind' | stats max(versionsBehind) by table.",
      4,
    );
  }
}
