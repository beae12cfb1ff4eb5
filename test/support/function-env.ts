import { type FunctionName, writeFunctionEnv } from '../../shared/config/function-env.ts';
import { type PipelineConfigInput, parsePipelineConfig } from '../../shared/config/pipeline-config.ts';
import { DEFAULTS } from '../../shared/kernel/defaults.ts';

/** Real resource names where a harness has them; the rest are well-formed placeholders. */
export interface EnvResources {
  readonly config?: PipelineConfigInput;
  readonly ledgerTable?: string;
  readonly manifestBucket?: string;
  readonly landingBucket?: string;
  readonly ingestQueueUrl?: string;
  readonly commitQueueUrl?: string;
  readonly sinkQueueUrl?: string;
  readonly eventBus?: string;
}

const queueUrl = (name: string) => `https://sqs.us-east-1.amazonaws.com/123456789012/${name}`;

/**
 * A function's whole environment, written by the writer the construct deploys with (`writeFunctionEnv`), with
 * the construct's defaults for its settings: a harness that starts a runtime itself (not through local mode's
 * template) cannot leave out a variable the runtime requires.
 */
export function functionEnv(name: FunctionName, r: EnvResources = {}): Record<string, string> {
  const common = {
    config: parsePipelineConfig(r.config ?? { tables: [{ name: 'events', prefix: 'events/' }] }),
    ledgerTable: r.ledgerTable ?? 'ledger',
  };
  const manifestBucket = r.manifestBucket ?? 'manifests';
  const commitQueueUrl = r.commitQueueUrl ?? queueUrl('commit.fifo');
  switch (name) {
    case 'batcher':
      return writeFunctionEnv.batcher({ ...common, manifestBucket, commitQueueUrl });
    case 'committer':
      return writeFunctionEnv.committer({ ...common, manifestBucket, eventBus: r.eventBus ?? 'default' });
    case 'sweeper':
      return writeFunctionEnv.sweeper({
        ...common,
        commitQueueUrl,
        sweepIntervalSeconds: DEFAULTS.sweepIntervalMinutes * 60,
      });
    case 'backfill':
      return writeFunctionEnv.backfill({
        ...common,
        landingBucket: r.landingBucket ?? 'landing',
        ingestQueueUrl: r.ingestQueueUrl ?? queueUrl('ingest'),
        recordsPerMessage: DEFAULTS.backfill.recordsPerMessage,
        pagesPerStep: DEFAULTS.backfill.pagesPerStep,
        stepsPerExecution: DEFAULTS.backfill.stepsPerExecution,
      });
    case 'sink':
      return writeFunctionEnv.sink({
        ...common,
        manifestBucket,
        sinkQueueUrl: r.sinkQueueUrl ?? queueUrl('sink.fifo'),
        sinkTimeoutSeconds: DEFAULTS.sink.timeoutSeconds,
      });
    case 'maintenance':
      return writeFunctionEnv.maintenance({ ...common, manifestBucket });
  }
}
