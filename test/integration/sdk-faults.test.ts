import { afterAll, describe, expect, it } from 'vitest';
import { destroyClients } from '../../shared/aws/clients.ts';
import { testClients } from '../support/aws.ts';
import { CLEAN_VERDICT, PipelineHarness } from '../support/harness.ts';
import { injectSdkFault } from '../support/sdk-faults.ts';

// AWS behaviour moto never produces, injected below the SDK's retry middleware so the real client retries
// it: docs/protocol.md, "What AWS does that the emulator doesn't".
const clientSets: ReturnType<typeof testClients>[] = [];
afterAll(() => clientSets.forEach(destroyClients));

async function harness(leaseSeconds = 60) {
  const clients = testClients();
  clientSets.push(clients);
  const h = await PipelineHarness.create(clients, {
    config: { tables: [{ name: 'orders', prefix: 'orders/' }], leaseSeconds },
    batchSize: 20,
  });
  return h;
}

const keys = (n: number, prefix = 'orders/f') =>
  Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(3, '0')}.json`);
const expectedOf = (list: readonly string[]) => list.map((key) => ({ table: 'orders', key }));
const clean = { ...CLEAN_VERDICT, dlqDepth: 0 };

/** The claim put of a file whose key ends with one of these names. */
const claimOf = (names: readonly string[]) => (command: string, input: Record<string, unknown>) => {
  if (command !== 'PutItemCommand') return false;
  const pk = (input.Item as { pk?: { S?: string } } | undefined)?.pk?.S ?? '';
  return pk.startsWith('FILE#') && names.some((name) => pk.endsWith(name));
};

describe('SDK retries that hide an applied write', () => {
  it('a claim applied on attempt 1 (answered 500), then throttled on every retry, ends committed exactly once', async () => {
    const h = await harness();
    const files = keys(20);
    const faultyNames = files.filter((_, i) => i % 4 === 0).map((k) => k.slice('orders/'.length));
    const fault = injectSdkFault(h.clients.dynamodb, {
      match: claimOf(faultyNames),
      // Every later attempt is throttled, however many the client makes (DynamoDB's default is more than 3).
      script: ['apply-then-500', ...Array<'throttle'>(9).fill('throttle')],
    });
    for (const key of files) await h.put(key);

    await h.pollIngest();
    expect(fault.faulted()).toBeGreaterThanOrEqual(faultyNames.length);
    await h.runUntilQuiet();
    expect(await h.verify(expectedOf(files))).toMatchObject(clean);
    // The ledger agrees with the manifests: each claim names the batch whose version lists the file (what
    // `inlet files` reports), never a batch that sealed without it.
    const listedIn = new Map<string, string>();
    for (const manifest of await h.manifests('orders'))
      for (const file of manifest.files) listedIn.set(file.key, manifest.batchIds.join(','));
    const claims = await h.ledger.scanFiles({ table: 'orders' });
    expect(claims).toHaveLength(files.length);
    for (const claim of claims) {
      const key = claim.identity.split('#').slice(2).join('#');
      expect(listedIn.get(key), key).toContain(claim.batchId);
    }
  });
});
