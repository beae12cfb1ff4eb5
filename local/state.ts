import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { catalogDatabaseName } from '../shared/bronze/catalog.ts';
import { OUTPUTS } from '../shared/kernel/names.ts';
import { emulatorAnswers, startEmulator } from './emulator.ts';
import type { HostedFunction } from './lambda/host.ts';
import { projectRoot } from './paths.ts';

/** `.inlet/` in the project, or INLET_STATE_DIR (tests use their own). */
export const stateDir = process.env.INLET_STATE_DIR ?? join(projectRoot, '.inlet');
export const localJson = join(stateDir, 'local.json');
const emulatorJson = join(stateDir, 'emulator.json');

/** `.inlet/local.json`: what the CLI, and any tool, needs to reach local mode. */
export interface LocalConfig {
  readonly endpoint: string;
  readonly region: string;
  readonly landingBucket: string;
  readonly manifestBucket: string;
  readonly ledgerTable: string;
  readonly ingestQueueUrl: string;
  readonly tables: Array<{ name: string; prefix: string }>;
  readonly stackName: string;
  readonly ingestDlqUrl: string;
  readonly commitQueueUrl: string;
  readonly commitDlqUrl: string;
  /** Absent in a local.json from before backfills existed: `npm start` rewrites it. */
  readonly backfillStateMachineArn?: string;
  /**
   * The stack's functions and their bundles: what a local backfill run by the CLI invokes. Absent in a
   * local.json from before functions ran from their bundles: `npm start` rewrites it.
   */
  readonly functions?: readonly HostedFunction[];
  /**
   * The Glue database the bronze tables are registered in (the stack's `GlueDatabaseName` output), when a
   * table has `catalog`. Absent in a local.json from before it was written, or of a stack without one.
   */
  readonly glueDatabase?: string;
}

/**
 * The stack's Glue database: its output, or for a stack deployed before that output existed, the default
 * the stack then used (`<stack>_bronze`).
 */
export function glueDatabaseOf(stack: {
  readonly stackName: string;
  readonly outputs: Record<string, string>;
}): string {
  return stack.outputs[OUTPUTS.glueDatabase] ?? catalogDatabaseName(stack.stackName);
}

/** `.inlet/local.json`'s content for a stack brought up on the emulator at `endpoint`. */
export function localConfigOf(
  stack: {
    readonly outputs: Record<string, string>;
    readonly tables: LocalConfig['tables'];
    readonly stackName: string;
    readonly functions?: readonly HostedFunction[];
  },
  endpoint: string,
  region: string,
): LocalConfig {
  const o = stack.outputs;
  return {
    endpoint,
    region,
    landingBucket: o[OUTPUTS.landingBucket] ?? '',
    manifestBucket: o[OUTPUTS.manifestBucket] ?? '',
    ledgerTable: o[OUTPUTS.ledgerTable] ?? '',
    ingestQueueUrl: o[OUTPUTS.ingestQueueUrl] ?? '',
    tables: stack.tables,
    stackName: stack.stackName,
    ingestDlqUrl: o[OUTPUTS.ingestDlqUrl] ?? '',
    commitQueueUrl: o[OUTPUTS.commitQueueUrl] ?? '',
    commitDlqUrl: o[OUTPUTS.commitDlqUrl] ?? '',
    backfillStateMachineArn: o[OUTPUTS.backfillStateMachine] ?? '',
    ...(stack.functions ? { functions: stack.functions } : {}),
    ...(o[OUTPUTS.glueDatabase] ? { glueDatabase: o[OUTPUTS.glueDatabase] } : {}),
  };
}

export function writeLocalConfig(config: LocalConfig): void {
  mkdirSync(stateDir, { recursive: true });
  writeFileSync(localJson, `${JSON.stringify(config, null, 2)}\n`);
}

export function readLocalConfig(): LocalConfig | undefined {
  return existsSync(localJson) ? (JSON.parse(readFileSync(localJson, 'utf8')) as LocalConfig) : undefined;
}

/**
 * The background emulator of local mode: reused while it answers (so a restarted pipeline finds its queues
 * and ledger), started detached otherwise. It outlives `npm start`; `inlet down` stops it.
 */
export async function ensureBackgroundEmulator(): Promise<{
  endpoint: string;
  pid: number;
  reused: boolean;
}> {
  mkdirSync(stateDir, { recursive: true });
  if (existsSync(emulatorJson)) {
    const known = JSON.parse(readFileSync(emulatorJson, 'utf8')) as { endpoint: string; pid: number };
    if (await emulatorAnswers(known.endpoint)) return { ...known, reused: true };
  }
  const emulator = await startEmulator({ detached: true, logFile: join(stateDir, 'emulator.log') });
  writeFileSync(emulatorJson, `${JSON.stringify({ endpoint: emulator.endpoint, pid: emulator.pid })}\n`);
  return { endpoint: emulator.endpoint, pid: emulator.pid, reused: false };
}

/** Stops the background emulator, if any; returns whether one was running. */
export function stopBackgroundEmulator(): boolean {
  if (!existsSync(emulatorJson)) return false;
  const { pid } = JSON.parse(readFileSync(emulatorJson, 'utf8')) as { pid: number };
  rmSync(emulatorJson, { force: true });
  rmSync(localJson, { force: true });
  try {
    process.kill(pid, 'SIGTERM');
    return true;
  } catch {
    return false;
  }
}
