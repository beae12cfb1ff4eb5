// Requests and dollars per file for a backlog drained at the deployed batching window; the same files also
// through a bronze table (bench/bronze-cost.ts) and with the ledger on provisioned capacity
// (bench/provisioned-ledger.ts).
import { createClients, destroyClients } from '../local/aws/clients.ts';
import { PipelineHarness } from '../test/support/harness.ts';
import { bronzeTable, landingFile, startSinkMeter } from './bronze-cost.ts';
import { billedUnits, PRICES, requestsPerFile, usdPerMillionFiles } from './prices.ts';
import { provisionedUsdPerMillionFiles } from './provisioned-ledger.ts';
import { type Benchmark, drain, log, putObjects, SIZES, sendEvents } from './support.ts';

export const cost: Benchmark = {
  name: 'cost',
  async run({ target, observer, endpoint }) {
    log(`cost and latency: ${SIZES.files} files, each also written to a bronze table`);
    // The handlers' clients, counted.
    const clients = createClients(target);
    const tables = [bronzeTable('events')];
    try {
      // As deployed (batch size 1,000), the table with a bronze sink: its files are real JSON Lines objects.
      const h = await PipelineHarness.create(clients, {
        config: { tables, leaseSeconds: 300 },
        batchSize: 1_000,
        batchingWindowMs: 20_000,
        visibilityTimeout: 300,
        notifications: false,
        countRequests: true,
      });
      const keys = Array.from(
        { length: SIZES.files },
        (_, i) => `events/2026/11/30/part-${String(i).padStart(6, '0')}.json`,
      );
      await putObjects(observer, h.resources.landingBucket, keys, (i) => landingFile(i));
      const sink = await startSinkMeter(h, { endpoint, observer }, tables);
      try {
        await sendEvents(observer, h.resources.ingestQueue.url, h.resources.landingBucket, keys);
        h.counter.reset();
        // The deployed batching window (20 s): batches fill to Lambda's 1,000, as they would on AWS. Each
        // commit's event runs the sink, outside the handlers' time and their counted clients.
        const drained = await drain(h, observer, {
          batchingWindowMs: 20_000,
          afterCommit: () => sink.afterCommit(),
        });
        const { invocations } = drained;
        const manifests = await h.manifests('events');
        const committed = manifests.reduce((n, m) => n + m.fileCount, 0);
        if (committed !== SIZES.files) throw new Error(`committed ${committed} of ${SIZES.files} files`);

        const n = SIZES.files;
        const units = billedUnits(h.counter, n, invocations, h.published.length);
        const usd = usdPerMillionFiles(units, n);
        const bronze = sink.result(n);
        return {
          cost: {
            files: n,
            requestsPerFile: requestsPerFile(units, n),
            requests: Object.fromEntries([...h.counter.requests].sort()),
            versions: manifests.length,
            usdPerMillionFiles: usd,
            withBronzeUsdPerMillionFiles: Math.round((usd + bronze.usdPerMillionFiles) * 100) / 100,
            bronze,
            // The same units with the ledger on provisioned capacity, at a steady rate.
            provisionedLedger: provisionedUsdPerMillionFiles(units, n),
            prices: PRICES,
          },
        };
      } finally {
        await sink.stop();
      }
    } finally {
      destroyClients(clients);
    }
  },
};
