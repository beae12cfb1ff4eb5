// What users would build instead, in the same run: the Powertools pipeline beside Inlet on the same events
// (bench/peers/ingest.ts), delta-rs beside the bronze sink on the same files (bench/peers/delta-rs.ts).
import { deltaRsPeer } from './peers/delta-rs.ts';
import { ingestPeers } from './peers/ingest.ts';
import type { Benchmark } from './support.ts';

export const peers: Benchmark = {
  name: 'peers',
  async run(ctx) {
    const { inlet, powertools } = await ingestPeers(ctx);
    const deltaRs = await deltaRsPeer(ctx);
    return { peers: { powertools, deltaRs, inlet } };
  },
};
