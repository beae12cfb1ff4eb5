import { Duration } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { METRIC, type MetricName } from '../shared/metrics.ts';
import { METRICS_NAMESPACE, SERVICE } from './functions.ts';
import type { StatefulResources } from './stateful.ts';

export interface MonitoringProps {
  readonly state: StatefulResources;
  readonly alarmTopic: ITopic;
  readonly maxMessageAge: Duration;
  /** A reconcile schedule is on: alarm when it finds files the ledger never saw. */
  readonly reconcile: boolean;
}

/** Dashboard and alarms over the Powertools (EMF) metrics and the queues. */
export class Monitoring extends Construct {
  readonly dashboard: Dashboard;
  readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const { state } = props;
    const m = (service: string, name: MetricName, statistic = 'Sum') =>
      new Metric({
        namespace: METRICS_NAMESPACE,
        metricName: name,
        dimensionsMap: { service },
        statistic,
        period: Duration.minutes(1),
      });
    const batcher = (name: MetricName, statistic?: string) => m(SERVICE.batcher, name, statistic);
    const committer = (name: MetricName, statistic?: string) => m(SERVICE.committer, name, statistic);
    const sweeper = (name: MetricName) => m(SERVICE.sweeper, name);
    const backfill = (name: MetricName) => m(SERVICE.backfill, name);

    const dlqDepth = (label: string, metric: IMetric) => ({ label, metric });
    const ingestDlq = state.ingestDlq.metricApproximateNumberOfMessagesVisible({
      period: Duration.minutes(1),
      statistic: 'Maximum',
    });
    const commitDlq = state.commitDlq.metricApproximateNumberOfMessagesVisible({
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
            left: [dlqDepth('ingest', ingestDlq).metric, dlqDepth('commit', commitDlq).metric],
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
      ],
    });

    const alarm = (name: string, metric: IMetric, threshold: number, description: string) => {
      const a = new Alarm(this, name, {
        metric,
        threshold,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
        alarmDescription: description,
      });
      a.addAlarmAction(new SnsAction(props.alarmTopic));
      this.alarms.push(a);
    };
    alarm(
      'IngestDlqNotEmpty',
      ingestDlq,
      1,
      'Ingest messages failed 10 times: files not ingested until redriven (inlet dlq redrive).',
    );
    alarm(
      'CommitDlqNotEmpty',
      commitDlq,
      1,
      'A commit request failed 10 times: its table is stuck (see CommitErrors).',
    );
    alarm(
      'OldestMessageAge',
      oldest,
      props.maxMessageAge.toSeconds(),
      'Ingestion is falling behind the landing rate.',
    );
    alarm(
      'CommitErrors',
      committer(METRIC.commitErrors),
      1,
      'The committer failed; a ManifestConflictError means a fork was refused.',
    );
    alarm(
      'VersionPendingTooLong',
      sweeper(METRIC.stalePending),
      1,
      'A reserved version waited longer than the sweep interval.',
    );
    alarm(
      'SealedBatchStalled',
      sweeper(METRIC.staleBatches),
      1,
      'A sealed batch waited longer than the sweep interval for its commit.',
    );
    if (props.reconcile) {
      alarm(
        'ReconcileFoundMissing',
        backfill(METRIC.reconcileMissing),
        1,
        'Reconcile found files the ledger never saw (lost S3 events) and enqueued them: check the notification setup.',
      );
    }
  }
}
