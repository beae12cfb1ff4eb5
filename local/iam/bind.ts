/**
 * Bound stacks for the two ways Inlet runs here: a stack deployed to the emulator (local mode, the deploy
 * and backfill tests: CloudFormation says what each logical id became) and a test harness's own resources
 * (named by the test: the synthesized template's logical ids are matched to them by role).
 */
import type { CfnTemplate } from '../synth.ts';
import { type BoundStack, bindTemplate, EMULATOR_ACCOUNT, type Physical } from './policies.ts';

/** A stack CloudFormation created: logical id -> physical id, as DescribeStackResources lists them. */
export function bindDeployed(
  template: CfnTemplate,
  resources: Record<string, string>,
  region: string,
): BoundStack {
  const physical: Physical = Object.fromEntries(Object.entries(resources).map(([id, ref]) => [id, { ref }]));
  return bindTemplate(template, physical, { region, account: EMULATOR_ACCOUNT });
}

/** What a test harness made in place of the stack's stateful resources. */
export interface HarnessResources {
  readonly ledgerTable: string;
  readonly landingBucket: string;
  readonly manifestBucket: string;
  readonly ingestQueue: { readonly url: string };
  readonly ingestDlq: { readonly url: string };
  readonly commitQueue: { readonly url: string };
  readonly commitDlq: { readonly url: string };
  readonly sinkQueue?: { readonly url: string };
  /** The Glue database the sink registers its tables in (the stack's `AWS::Glue::Database`). */
  readonly glueDatabase?: string;
}

/** The template's stateful logical ids (`InletStateLedger<hash>` ...) bound to a harness's resources. */
export function bindHarness(template: CfnTemplate, resources: HarnessResources, region: string): BoundStack {
  const byPrefix: Record<string, string | undefined> = {
    InletStateLedger: resources.ledgerTable,
    InletStateLanding: resources.landingBucket,
    InletStateManifests: resources.manifestBucket,
    InletStateIngestQueue: resources.ingestQueue.url,
    InletStateIngestDlq: resources.ingestDlq.url,
    InletStateCommitQueue: resources.commitQueue.url,
    InletStateCommitDlq: resources.commitDlq.url,
    InletBronzeSinkQueue: resources.sinkQueue?.url,
    InletBronzeCatalogDatabase: resources.glueDatabase,
  };
  const physical: Physical = {};
  for (const id of Object.keys(template.Resources)) {
    const ref = byPrefix[id.replace(/[0-9A-F]{8}$/, '')];
    if (ref) physical[id] = { ref };
  }
  return bindTemplate(template, physical, { region, account: EMULATOR_ACCOUNT });
}
