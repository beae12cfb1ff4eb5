// The protocol's handler time for N files against N plain puts, side by side.
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import pLimit from 'p-limit';
import { createPipelineResources } from '../test/support/resources.ts';
import { type Benchmark, log, SIZES, seconds } from './support.ts';

/** The same number of plain, unconditional puts of the same items at the batcher's concurrency. */
export const rawWrites: Benchmark = {
  name: 'raw-writes',
  async run({ observer: clients, results, cpuSeconds }) {
    log('raw writes, side by side');
    // A ledger table exactly like the pipeline's (same keys, same index), written without the protocol.
    const { ledgerTable: table } = await createPipelineResources(clients, { notifications: false });
    const limit = pLimit(64);
    const started = Date.now();
    const cpuAtStart = cpuSeconds();
    await Promise.all(
      Array.from({ length: SIZES.files }, (_, i) =>
        limit(() =>
          clients.dynamodb.send(
            new PutItemCommand({
              TableName: table,
              Item: {
                pk: { S: `FILE#events#landing#-#events/2026/11/30/part-${i}.json` },
                sk: { S: 'F' },
                batchId: { S: '01JRAW' },
                size: { N: '1000' },
              },
            }),
          ),
        ),
      ),
    );
    const rawMs = Date.now() - started;
    const rawCpu = cpuSeconds() - cpuAtStart;
    const { protocolSeconds, protocolCpuSeconds } = results;
    return {
      // Plain unconditional puts of N items vs the handlers' time for N files (claims, staging, seal, commit).
      protocolVsRawRatio:
        typeof protocolSeconds === 'number'
          ? Math.round((rawMs / (protocolSeconds * 1000)) * 100) / 100
          : null,
      rawSeconds: seconds(rawMs),
      // The same in CPU time (the client and the emulator), which the machine's load hardly moves.
      protocolVsRawCpuRatio:
        typeof protocolCpuSeconds === 'number' && protocolCpuSeconds > 0
          ? Math.round((rawCpu / protocolCpuSeconds) * 100) / 100
          : null,
      rawCpuSeconds: Math.round(rawCpu * 100) / 100,
    };
  },
};
