import { ExecutionsApi } from '../../local/step-functions/executions-api.ts';
import { print, waitFor } from '../backfill/render.ts';
import { type Backfills, lastSegment } from '../backfill/run-view.ts';
import { StepFunctionsBackfills } from '../backfill/step-functions.ts';
import { CliError } from '../errors.ts';
import { type CliTarget, requireTable } from '../target.ts';

// `inlet backfill start|status`: builds the input, starts and follows the run through Step Functions' API
// (on a deployed stack, and in local mode, whose executor runs what the emulator's Step Functions holds),
// and hands the run to the renderer.

export interface StartOptions {
  readonly table: string;
  readonly prefix?: string;
  readonly startAfter?: string;
  /** s3://bucket/.../manifest.json of an S3 Inventory report: read instead of listing. */
  readonly inventory?: string;
  readonly modifiedAfter?: string;
  readonly modifiedBefore?: string;
  readonly glob?: string;
  readonly maxObjects?: number;
  readonly dryRun: boolean;
  readonly wait: boolean;
  readonly name?: string;
  readonly json: boolean;
}

function backfills(target: CliTarget): Backfills {
  if (!target.backfillStateMachineArn)
    throw new CliError(
      target.local
        ? 'this local stack predates backfills: `npx inlet down`, then `npm start` creates it afresh'
        : 'this stack has no backfill state machine: deploy the current version',
    );
  return new StepFunctionsBackfills(target);
}

/**
 * Local mode runs executions in `npm start`'s process: without it, one started now waits, RUNNING, as the
 * user should be told rather than left watching a progress bar that never moves.
 */
async function sayIfNothingRunsIt(target: CliTarget, execution: string): Promise<void> {
  if (!target.local || !target.endpoint) return;
  const { executors } = await new ExecutionsApi(target.endpoint)
    .executors(target.backfillStateMachineArn)
    .catch(() => ({ executors: [{}] }));
  if (executors.length === 0)
    process.stderr.write(
      `inlet: local mode is not running: ${lastSegment(execution)} stays RUNNING until \`npm start\` runs it\n`,
    );
}

/** Execution names: 1-80 of letters, digits, - and _; time-sortable. */
export function executionName(table: string, now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${table.slice(0, 50)}-${stamp}-${Math.random().toString(36).slice(2, 6)}`;
}

export async function backfillStart(target: CliTarget, o: StartOptions): Promise<number> {
  requireTable(target, o.table);
  const input: Record<string, unknown> = { table: o.table };
  if (o.prefix !== undefined) input.prefix = o.prefix;
  if (o.startAfter !== undefined) input.startAfter = o.startAfter;
  if (o.inventory !== undefined) input.inventory = o.inventory;
  if (o.modifiedAfter !== undefined) input.modifiedAfter = o.modifiedAfter;
  if (o.modifiedBefore !== undefined) input.modifiedBefore = o.modifiedBefore;
  if (o.glob !== undefined) input.glob = o.glob;
  if (o.maxObjects !== undefined) input.maxObjects = o.maxObjects;
  if (o.dryRun) input.dryRun = true;
  const service = backfills(target);
  const name = o.name ?? executionName(o.table);
  const execution = await service.start(input, name);
  await sayIfNothingRunsIt(target, execution);
  if (!o.wait) {
    if (o.json) console.log(JSON.stringify({ execution, status: 'RUNNING' }));
    else
      console.log(
        `started ${lastSegment(execution)}; follow it with: inlet backfill status ${lastSegment(execution)} --wait`,
      );
    return 0;
  }
  const view = await waitFor(service, execution, o.json, o.maxObjects);
  print(view, o.json);
  if (!o.json && view.status === 'SUCCEEDED' && target.local && !o.dryRun)
    console.log('  the running pipeline (npm start) ingests what was enqueued; `inlet status` shows it');
  return view.status === 'SUCCEEDED' ? 0 : 1;
}

export async function backfillStatus(
  target: CliTarget,
  execution: string,
  o: { wait: boolean; json: boolean },
): Promise<number> {
  const service = backfills(target);
  const view = o.wait ? await waitFor(service, execution, o.json) : await service.view(execution);
  print(view, o.json);
  return view.status === 'SUCCEEDED' || view.status === 'RUNNING' ? 0 : 1;
}
