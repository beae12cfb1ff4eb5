import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { OUTPUTS } from '../shared/kernel/names.ts';
import { IngestionPipeline } from './ingestion-pipeline.ts';
import type { IngestionPipelineProps, InletTableProps } from './props.ts';

export interface InletStackProps extends StackProps {
  readonly tables: readonly InletTableProps[];
  /** Import this bucket instead of creating one. */
  readonly landingBucketName?: string;
  /** The imported landing bucket has versioning enabled (needed by `allowOverwrites` tables). */
  readonly landingBucketVersioned?: boolean;
  readonly pipeline?: Omit<IngestionPipelineProps, 'tables' | 'landingBucket' | 'landingBucketVersioned'>;
}

/** Stack output names: defined in shared/kernel/names.ts so the CLI reads them without loading CDK. */
export { OUTPUTS };

export class InletStack extends Stack {
  readonly pipeline: IngestionPipeline;

  constructor(scope: Construct, id: string, props: InletStackProps) {
    super(scope, id, props);
    const landingBucket = props.landingBucketName
      ? Bucket.fromBucketName(this, 'ImportedLanding', props.landingBucketName)
      : undefined;
    this.pipeline = new IngestionPipeline(this, 'Inlet', {
      ...props.pipeline,
      tables: props.tables,
      landingBucket,
      landingBucketVersioned: props.landingBucketVersioned,
    });
    const { state } = this.pipeline;
    const out = (name: string, value: string) => new CfnOutput(this, name, { value });
    out(OUTPUTS.landingBucket, state.landingBucket.bucketName);
    out(OUTPUTS.manifestBucket, state.manifestBucket.bucketName);
    out(OUTPUTS.ledgerTable, state.ledger.tableName);
    out(OUTPUTS.ingestQueueUrl, state.ingestQueue.queueUrl);
    out(OUTPUTS.ingestDlqUrl, state.ingestDlq.queueUrl);
    out(OUTPUTS.commitQueueUrl, state.commitQueue.queueUrl);
    out(OUTPUTS.commitDlqUrl, state.commitDlq.queueUrl);
    out(OUTPUTS.tables, JSON.stringify(this.pipeline.config.tables));
    out(OUTPUTS.dashboard, this.pipeline.monitoring.dashboard.dashboardName);
    out(OUTPUTS.alarmTopic, this.pipeline.alarmTopic.topicArn);
    out(OUTPUTS.eventBus, this.pipeline.eventBus.eventBusName);
    out(OUTPUTS.backfillStateMachine, this.pipeline.backfill.stateMachine.stateMachineArn);
    // The name itself (not the database's Ref): the same value, and readable where no Ref is resolved.
    const database = this.pipeline.bronze?.catalogDatabase;
    if (database !== undefined) out(OUTPUTS.glueDatabase, database);
  }
}
