// Event to manifest, per file, at a steady arrival rate.
import { createClients, destroyClients } from '../local/aws/clients.ts';
import { type Benchmark, drain, log, percentile, pipeline, quick, sendEvents } from './support.ts';

/**
 * A backlog drained at once would measure the backlog: 10 files every 100 ms while the batcher and committer
 * run, each invocation after the other.
 */
export const latency: Benchmark = {
  name: 'latency',
  async run({ target, observer }) {
    const clients = createClients(target);
    try {
      // The bench's deployed window (1 s), then none: the batcher takes what has arrived at once.
      const windowed = await measure(clients, observer, 1_000);
      const window0 = await measure(clients, observer, 0);
      return { latencyMs: { ...windowed, window0 } };
    } finally {
      destroyClients(clients);
    }
  },
};

async function measure(
  clients: ReturnType<typeof createClients>,
  observer: Parameters<Benchmark['run']>[0]['observer'],
  batchingWindowMs: number,
) {
  log(`latency at a steady arrival rate, batching window ${batchingWindowMs} ms`);
  const table = `lat${batchingWindowMs}`;
  const h = await pipeline(clients, table, false, batchingWindowMs);
  const total = quick ? 300 : 1_500;
  const keys = Array.from({ length: total }, (_, i) => `${table}/2026/11/30/f-${i}.json`);
  let sending = true;
  const sender = (async () => {
    for (let i = 0; i < keys.length; i += 10) {
      await sendEvents(
        observer,
        h.resources.ingestQueue.url,
        h.resources.landingBucket,
        keys.slice(i, i + 10),
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    sending = false;
  })();
  while (sending) {
    await h.pollIngest();
    await h.pollCommit();
  }
  await sender;
  await drain(h, observer);
  const latencies = (await h.manifests(table)).flatMap((m) =>
    m.files.map((f) => Date.parse(m.committedAt) - Date.parse(f.eventTime)),
  );
  if (latencies.length !== total) throw new Error(`latency run committed ${latencies.length} of ${total}`);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), files: total, batchingWindowMs };
}
