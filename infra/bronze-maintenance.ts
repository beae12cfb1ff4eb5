import { join } from 'node:path';
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  GraphWidget,
  type IWidget,
  type Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Rule, RuleTargetInput, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { bronzeLocation } from '../shared/bronze/config.ts';
import { writeFunctionEnv } from '../shared/config/function-env.ts';
import type { PipelineConfig } from '../shared/config/pipeline-config.ts';
import { DEFAULTS } from '../shared/kernel/defaults.ts';
import { METRIC, type MetricName, SERVICE } from '../shared/kernel/names.ts';
import { projectRoot } from '../shared/kernel/project-root.ts';
import { LAMBDA_BUNDLING } from './functions.ts';
import { nagResource } from './nag.ts';
import { serviceMetric } from './service-metric.ts';
import type { StatefulResources } from './stateful.ts';

export interface BronzeMaintenanceProps {
  readonly state: StatefulResources;
  readonly config: PipelineConfig;
  readonly logRetention: RetentionDays;
  /** @default 15 minutes, Lambda's most: optimize rewrites as many bins as fit, the next run goes on */
  readonly timeout?: Duration;
  /**
   * @default 1024 (one data file of `targetFileBytes`, 100 MiB by default, built in memory, grown to about
   * twice that, beside one input row group)
   */
  readonly memorySize?: number;
}

/**
 * The scheduled optimize and vacuum of the bronze tables (on unless `maintenance: false`; docs/bronze.md "Optimize
 * and vacuum"): one function, one EventBridge schedule per table (`{table}` as its event), each run
 * optimizing the table until its time budget and then vacuuming it. Deployed unless every table turns it off.
 */
export class BronzeMaintenance extends Construct {
  readonly fn: NodejsFunction;
  /** Scheduled invocations EventBridge could not deliver after its retries. */
  readonly dlq: Queue;

  static maybe(scope: Construct, id: string, props: BronzeMaintenanceProps): BronzeMaintenance | undefined {
    return props.config.tables.some((t) => t.bronze?.maintenance)
      ? new BronzeMaintenance(scope, id, props)
      : undefined;
  }

  constructor(scope: Construct, id: string, props: BronzeMaintenanceProps) {
    super(scope, id);
    const { state, config } = props;
    this.fn = new NodejsFunction(this, 'Maintenance', {
      entry: join(projectRoot, 'functions', 'maintenance.ts'),
      projectRoot,
      depsLockFilePath: join(projectRoot, 'package-lock.json'),
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 1024,
      timeout: props.timeout ?? Duration.minutes(15),
      environment: writeFunctionEnv.maintenance({
        config,
        ledgerTable: state.ledger.tableName,
        manifestBucket: state.manifestBucket.bucketName,
      }),
      logGroup: new LogGroup(this, 'MaintenanceLogs', { retention: props.logRetention }),
      bundling: LAMBDA_BUNDLING,
    });
    this.dlq = new Queue(this, 'MaintenanceDlq', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(DEFAULTS.queueRetentionDays),
    });
    const wildcards: string[] = [];
    for (const table of config.tables) {
      const maintenance = table.bronze?.maintenance;
      if (!table.bronze || !maintenance) continue;
      new Rule(this, `Schedule-${table.name}`, {
        schedule: Schedule.rate(Duration.hours(maintenance.everyHours)),
        description: `Optimizes and vacuums the bronze table ${table.name}`,
        targets: [
          new LambdaFunction(this.fn, {
            event: RuleTargetInput.fromObject({ table: table.name }),
            retryAttempts: 2,
            deadLetterQueue: this.dlq,
          }),
        ],
      });
      const { bucket, prefix } = bronzeLocation(table.name, table.bronze, state.manifestBucket.bucketName);
      const bucketArn = table.bronze.location
        ? Stack.of(this).formatArn({ service: 's3', region: '', account: '', resource: bucket })
        : state.manifestBucket.bucketArn;
      const objects = `${bucketArn}/${prefix === '' ? '' : `${prefix}/`}*`;
      wildcards.push(objects);
      // Reads the log and data files, writes data files and commits, deletes data files (vacuum's
      // DeleteObjects needs s3:DeleteObject per key). Only under the table's root.
      this.fn.addToRolePolicy(
        new PolicyStatement({
          actions: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'],
          resources: [objects],
        }),
      );
      // Vacuum lists the root; a GET of a missing `_last_checkpoint` answers 404 only to a caller that may list
      // the bucket, else 403 (the sink's grant, for the same reason).
      this.fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucketArn] }));
    }
    for (const resource of wildcards)
      Validations.of(this.fn).acknowledge({
        id: `AwsSolutions-IAM5[Resource::${nagResource(Stack.of(this).resolve(resource))}]`,
        reason: "Objects under a Delta table's root: the narrowest scope S3 offers.",
      });
    Validations.of(this.dlq).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: "It is the dead-letter queue of the maintenance schedules' targets.",
    });
  }

  metric(name: MetricName, statistic = 'Sum', period = Duration.minutes(5)): Metric {
    return serviceMetric(SERVICE.maintenance, name, statistic, period);
  }

  /** Its row of the pipeline dashboard: files rewritten and written, files vacuumed, failures. */
  widgets(): IWidget[] {
    const m = (name: MetricName) => this.metric(name);
    return [
      new GraphWidget({
        title: 'Bronze optimize: files rewritten, written',
        left: [m(METRIC.optimizeFilesRemoved), m(METRIC.optimizeFilesAdded)],
        right: [m(METRIC.optimizeBytes)],
        width: 8,
      }),
      new GraphWidget({
        title: 'Bronze vacuum: files deleted',
        left: [m(METRIC.vacuumFilesDeleted)],
        right: [m(METRIC.vacuumBytesDeleted)],
        width: 8,
      }),
      new GraphWidget({ title: 'Bronze maintenance: errors', left: [m(METRIC.maintenanceErrors)], width: 8 }),
    ];
  }

  /** `MaintenanceErrors` (a table whose optimize or vacuum failed) and the schedules' DLQ, to the alarm topic. */
  alarms(topic: ITopic): Alarm[] {
    const alarms = [
      new Alarm(this, 'MaintenanceErrorsAlarm', {
        alarmDescription:
          "A bronze table's scheduled optimize or vacuum failed (logs: 'bronze table maintenance failed').",
        metric: this.metric(METRIC.maintenanceErrors),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      new Alarm(this, 'MaintenanceDlqNotEmpty', {
        alarmDescription: 'A scheduled bronze maintenance run could not be invoked.',
        metric: this.dlq.metricApproximateNumberOfMessagesVisible({
          period: Duration.minutes(5),
          statistic: 'Maximum',
        }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    ];
    for (const alarm of alarms) alarm.addAlarmAction(new SnsAction(topic));
    return alarms;
  }
}
