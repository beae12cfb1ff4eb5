// Lambda's SQS event source mappings for the peers' pipelines, served side by side in one loop.
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { AwsClients } from '../../local/aws/clients.ts';
import { queueDepth } from '../../local/aws/queue-depth.ts';
import { pollOnce } from '../../local/poller.ts';

/** One event source mapping: its queue, its settings, the function it invokes, the client it polls with. */
export interface Source {
  readonly client: SQSClient;
  readonly queueUrl: string;
  readonly batchSize: number;
  readonly batchingWindowMs?: number;
  readonly handler: (event: SQSEvent) => Promise<SQSBatchResponse>;
}

/** A pipeline the loop serves: its mappings, and what says it is done once its queues are empty. */
export interface ServedPipeline {
  readonly name: string;
  readonly sources: readonly Source[];
  readonly quiet: () => Promise<boolean>;
}

export interface RunStats {
  readonly invocations: number;
  /** Time spent in its invocations (receive, handler, delete). */
  readonly busyMs: number;
  /** From the loop's start until the pipeline was found done. */
  readonly wallMs: number;
}

/**
 * Every pipeline's mappings in turn, one invocation at a time, until each pipeline's queues are empty and its
 * `quiet` says it is done. No two invocations overlap, so each one's time is its own whatever else is
 * served; sharing the loop only lets a pipeline that waits out a visibility timeout (Powertools' duplicate
 * failed as in progress, back after 30 s) leave the time to the others. A queue is polled only when a message
 * is visible in it (the bench's own look, uncounted): waiting costs no requests, as Lambda's long polls cost
 * next to none.
 */
export async function serve(
  observer: AwsClients,
  pipelines: readonly ServedPipeline[],
): Promise<Map<string, RunStats>> {
  const started = performance.now();
  const stats = new Map<string, { invocations: number; busyMs: number; wallMs: number }>(
    pipelines.map((p) => [p.name, { invocations: 0, busyMs: 0, wallMs: 0 }]),
  );
  const done = new Set<string>();
  while (done.size < pipelines.length) {
    let anyWorked = false;
    for (const pipeline of pipelines) {
      if (done.has(pipeline.name)) continue;
      const own = stats.get(pipeline.name) ?? { invocations: 0, busyMs: 0, wallMs: 0 };
      let waiting = 0;
      let worked = false;
      for (const source of pipeline.sources) {
        const { visible, inFlight } = await queueDepth(observer.sqs, source.queueUrl);
        waiting += visible + inFlight;
        if (visible === 0) continue;
        const begun = performance.now();
        const poll = await pollOnce(source, source.handler);
        if (poll.received === 0) continue;
        own.invocations += 1;
        own.busyMs += performance.now() - begun;
        worked = true;
      }
      anyWorked ||= worked;
      if (!worked && waiting === 0 && (await pipeline.quiet())) {
        own.wallMs = performance.now() - started;
        done.add(pipeline.name);
      }
    }
    if (!anyWorked && done.size < pipelines.length) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return stats;
}
