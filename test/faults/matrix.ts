/**
 * The crash matrix: a crash before and after every port call of the batcher and the committer, and each
 * call "applied, then refused" (the SDK-retry masking), then recovery; each scenario must end with every
 * file committed exactly once. It runs on any pipeline with the harness's driving surface: the in-memory
 * fakes (`memoryTarget` in targets.ts, the whole matrix in seconds) or the emulator (a smoke that crosses the adapters).
 */
import type { PollResult } from '../../local/poller.ts';
import type { PipelineConfigInput } from '../../shared/config/pipeline-config.ts';
import { parsePipelineConfig } from '../../shared/config/pipeline-config.ts';
import type { Ledger, LedgerQueries } from '../../shared/ingestion/ledger.ts';
import { Router } from '../../shared/ingestion/routing.ts';
import { s3Notification } from '../support/events.ts';
import type { CrashPlan, FaultInjector } from '../support/faults.ts';
import type { ExpectedFile, Verdict } from '../support/verdict.ts';

export type Component = 'batcher' | 'committer';

export interface Scenario {
  readonly name: string;
  readonly component: Component;
  readonly crash: CrashPlan;
}

export interface ScenarioResult {
  readonly scenario: Scenario;
  readonly lost: string[];
  readonly duplicated: string[];
  /** I3 and liveness problems: gaps, heads out of step, a DLQ not empty, quarantine not exactly once. */
  readonly problems: string[];
  readonly crashed: boolean;
  readonly ms: number;
}

type Invocation = PollResult & { injector: FaultInjector };

/** What the matrix drives: PipelineHarness (emulator) and MemoryHarness (fakes) both offer it. */
export interface MatrixPipeline {
  readonly landingBucket: string;
  readonly ledger: Ledger & LedgerQueries;
  readonly now: () => number;
  put(key: string): Promise<void>;
  sendEvent(body: string): Promise<void>;
  pollIngest(crash?: CrashPlan, batchSize?: number): Promise<Invocation>;
  pollCommit(crash?: CrashPlan): Promise<Invocation>;
  runUntilQuiet(maxMs?: number): Promise<void>;
  verify(expected: readonly ExpectedFile[]): Promise<Verdict>;
}

/** A fresh, empty pipeline per scenario. */
export type MatrixTarget = (config: PipelineConfigInput) => Promise<MatrixPipeline>;

// The lease outlives the visibility timeout (1 s), so redeliveries also meet claims that are still live.
const CONFIG = { tables: [{ name: 'orders', prefix: 'orders/' }], leaseSeconds: 2 };
const WARM = ['orders/x-0.json', 'orders/x-1.json', 'orders/x 2+.json'];
const FRESH = ['orders/y-0.json', 'orders/y-1.json', 'orders/ü y-2.json', 'orders/y=3;.json'];
const STALE = 'orders/z-stale.json';
const EXPECTED = [...WARM, ...FRESH, STALE].map((key) => ({ table: 'orders', key }));

/**
 * The workload every scenario runs. Phase 1 commits v1. Phase 2 is the invocation under test: fresh files,
 * a duplicate of a committed file (duplicate path), a claim left by a dead batcher with an expired lease
 * (takeover path) and a malformed message (quarantine path). Phase 3 lets the pipeline recover.
 */
async function prepare(h: MatrixPipeline): Promise<void> {
  for (const key of WARM) await h.put(key);
  await h.runUntilQuiet();
  const routed = new Router(parsePipelineConfig(CONFIG)).route({
    bucket: h.landingBucket,
    key: STALE,
    size: 1,
    eTag: 'e',
    versionId: null,
    sequencer: null,
    eventTime: new Date(h.now()).toISOString(),
  });
  const stale = routed.kind === 'routed' ? routed.files[0] : undefined;
  if (!stale) throw new Error('stale file did not route');
  await h.ledger.claimFile(stale, '00000000000000000000DEAD00', h.now() - 60_000);
  for (const key of FRESH) await h.put(key);
  await h.sendEvent(s3Notification({ bucket: h.landingBucket, key: WARM[0] as string }));
  await h.sendEvent(s3Notification({ bucket: h.landingBucket, key: STALE, size: 1 }));
  await h.sendEvent('{"not": "an s3 event"}');
}

async function phase2(h: MatrixPipeline, scenario?: Scenario) {
  const batcher = await h.pollIngest(scenario?.component === 'batcher' ? scenario.crash : undefined, 50);
  if (scenario?.component === 'batcher') return { fired: batcher.injector.fired };
  const committer = await h.pollCommit(scenario?.crash);
  return { fired: committer.injector.fired };
}

export interface DiscoverOptions {
  /**
   * Which occurrences of a method called several times get a scenario: the first and the last (what the
   * emulator can afford), or every one (the fakes can). @default 'ends'
   */
  readonly occurrences?: 'ends' | 'all';
}

/** Runs the workload once without faults and lists every port call each component makes: the crash points. */
export async function discoverScenarios(
  target: MatrixTarget,
  options: DiscoverOptions = {},
): Promise<{ scenarios: Scenario[]; points: string[] }> {
  const counts: Record<Component, Map<string, number>> = { batcher: new Map(), committer: new Map() };
  const h = await target(CONFIG);
  await prepare(h);
  const batcher = await h.pollIngest(undefined, 50);
  for (const call of batcher.injector.calls) counts.batcher.set(call, (counts.batcher.get(call) ?? 0) + 1);
  const committer = await h.pollCommit();
  for (const call of committer.injector.calls)
    counts.committer.set(call, (counts.committer.get(call) ?? 0) + 1);

  const scenarios: Scenario[] = [];
  const points: string[] = [];
  for (const component of ['batcher', 'committer'] as const) {
    for (const [point, n] of counts[component]) {
      points.push(`${component}:${point}`);
      const occurrences =
        options.occurrences === 'all' ? Array.from({ length: n }, (_, i) => i + 1) : n > 1 ? [1, n] : [1];
      for (const occurrence of occurrences) {
        for (const when of ['before', 'after', 'applied-then-refused'] as const) {
          scenarios.push({
            name:
              when === 'applied-then-refused'
                ? `${component}: ${point} #${occurrence} applied, then refused`
                : `${component} crashes ${when} ${point} #${occurrence}`,
            component,
            crash: { point, occurrence, when },
          });
        }
      }
    }
  }
  return { scenarios, points };
}

export async function runScenario(target: MatrixTarget, scenario: Scenario): Promise<ScenarioResult> {
  const started = Date.now();
  const h = await target(CONFIG);
  await prepare(h);
  const { fired } = await phase2(h, scenario);
  await h.runUntilQuiet(90_000);
  const verdict = await h.verify(EXPECTED);
  const problems: string[] = [];
  if (!verdict.contiguous) problems.push(`versions not contiguous: ${JSON.stringify(verdict.versions)}`);
  if (!verdict.headsMatch) problems.push('table head disagrees with the manifests');
  if (verdict.dlqDepth > 0) problems.push(`${verdict.dlqDepth} messages in a DLQ`);
  if (verdict.unexpected.length > 0) problems.push(`unexpected files: ${verdict.unexpected.join(', ')}`);
  const quarantined = await h.ledger.listQuarantine([new Date(h.now()).toISOString().slice(0, 10)]);
  if (quarantined.length !== 1) problems.push(`quarantine holds ${quarantined.length} entries, expected 1`);
  if (!fired) problems.push('the crash point was never reached');
  return {
    scenario,
    lost: verdict.lost,
    duplicated: verdict.duplicated,
    problems,
    crashed: fired,
    ms: Date.now() - started,
  };
}

export interface MatrixOptions extends DiscoverOptions {
  /** Scenarios run at once, each on its own pipeline. The fakes share one clock hook: 1. @default 4 */
  readonly concurrency?: number;
  /** Runs only the scenarios this keeps (a smoke); every point is still discovered. */
  readonly only?: (scenario: Scenario) => boolean;
  readonly onResult?: (result: ScenarioResult) => void;
}

/** Runs every scenario (or those `only` keeps), a few at a time. */
export async function runMatrix(
  target: MatrixTarget,
  options: MatrixOptions = {},
): Promise<{ points: string[]; results: ScenarioResult[] }> {
  const { scenarios, points } = await discoverScenarios(target, options);
  const results: ScenarioResult[] = [];
  const queue = scenarios.filter(options.only ?? (() => true));
  const workers = Array.from({ length: options.concurrency ?? 4 }, async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const result = await runScenario(target, next).catch(
        (error: unknown): ScenarioResult => ({
          scenario: next as Scenario,
          lost: ['(scenario failed to run)'],
          duplicated: [],
          problems: [String(error)],
          crashed: false,
          ms: 0,
        }),
      );
      results.push(result);
      options.onResult?.(result);
    }
  });
  await Promise.all(workers);
  return { points, results };
}

/** The scenarios that lost, duplicated or broke another invariant, as a test reports them. */
export function failuresOf(results: readonly ScenarioResult[]) {
  return results
    .filter((r) => r.lost.length > 0 || r.duplicated.length > 0 || r.problems.length > 0)
    .map((r) => ({
      scenario: r.scenario.name,
      lost: r.lost,
      duplicated: r.duplicated,
      problems: r.problems,
    }));
}

export function summaryLine(results: readonly ScenarioResult[]): string {
  const lost = results.reduce((n, r) => n + r.lost.length, 0);
  const duplicated = results.reduce((n, r) => n + r.duplicated.length, 0);
  return `faults: ${results.length} scenarios, ${lost} lost, ${duplicated} duplicated`;
}
