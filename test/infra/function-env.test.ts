import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { InletStack } from '../../infra/inlet-stack.ts';
import { FUNCTION_ENV } from '../../shared/config/function-env.ts';
import { ENV, SERVICE } from '../../shared/kernel/names.ts';
import { backfillFromEnv } from '../../shared/runtime/backfill.ts';
import { batcherRuntimeFromEnv } from '../../shared/runtime/batcher.ts';
import { committerRuntimeFromEnv } from '../../shared/runtime/committer.ts';
import { maintenanceRuntimeFromEnv } from '../../shared/runtime/maintenance.ts';
import { sinkRuntimeFromEnv } from '../../shared/runtime/sink.ts';
import { sweeperRuntimeFromEnv } from '../../shared/runtime/sweeper.ts';
import { functionEnv } from '../support/function-env.ts';
import { cdkApp } from './cdk-app.ts';

// What a function's runtime reads and what the construct writes into its environment must be the same set:
// a variable the runtime starts to require that the construct does not write fails every cold start on AWS,
// and one the construct writes that nothing reads is a stale name (or a typo) that costs the 4 KB budget.

type Env = Record<string, string | undefined>;

/** Each function's start, as its entrypoint (functions/*.ts) does it: everything it reads from its env. */
const START: Record<keyof typeof SERVICE, (env: Env) => unknown> = {
  batcher: (env) => batcherRuntimeFromEnv(SERVICE.batcher, env),
  committer: (env) => committerRuntimeFromEnv(SERVICE.committer, env),
  sweeper: (env) => sweeperRuntimeFromEnv(SERVICE.sweeper, env),
  backfill: (env) => backfillFromEnv(SERVICE.backfill, env),
  sink: (env) => sinkRuntimeFromEnv(env),
  maintenance: (env) => maintenanceRuntimeFromEnv(env),
};

/** Read by Powertools itself (Logger, Metrics) from process.env, not by Inlet's runtime. */
const POWERTOOLS_ONLY: string[] = [ENV.serviceName, ENV.logLevel];
/**
 * Written only when the stack uses what they name (the Glue database: only with a catalogued bronze table),
 * optional for the runtime: a harness that does not exercise it leaves it out.
 */
const WRITTEN_WHEN_USED: string[] = [ENV.glueDatabase];
/** Set by Lambda (region, credentials) or by local mode only (the emulator endpoint), never by the construct. */
const PLATFORM = /^(AWS_|INLET_AWS_)/;

/** The construct's environment of each function, CloudFormation references replaced by plausible values. */
function writtenEnvironments(): Map<keyof typeof SERVICE, Env> {
  const stack = new InletStack(cdkApp(), 'Env', {
    tables: [
      { name: 'orders', prefix: 'orders/', bronze: { format: 'jsonl', maintenance: {} } },
      { name: 'clicks', prefix: 'clicks/' },
    ],
  });
  const functions = Template.fromStack(stack).findResources('AWS::Lambda::Function');
  const found = new Map<keyof typeof SERVICE, Env>();
  for (const [id, fn] of Object.entries(functions)) {
    const name = (Object.keys(SERVICE) as (keyof typeof SERVICE)[]).find((n) =>
      new RegExp(`^Inlet(Functions|Bronze)?${n[0]?.toUpperCase()}${n.slice(1)}[0-9A-F]{8}$`).test(id),
    );
    if (!name) continue;
    const variables = (fn.Properties.Environment?.Variables ?? {}) as Record<string, unknown>;
    found.set(
      name,
      Object.fromEntries(
        Object.entries(variables).map(([key, value]) => [
          key,
          typeof value === 'string' ? value : `https://sqs.us-east-1.amazonaws.com/123456789012/${key}`,
        ]),
      ),
    );
  }
  return found;
}

/** Runs `start` on `env`, recording every variable it reads (set or not). */
function reads(start: (env: Env) => unknown, env: Env): Set<string> {
  const read = new Set<string>();
  const watched = new Proxy(env, {
    get(target, key) {
      if (typeof key === 'string') read.add(key);
      return target[key as string];
    },
  });
  start(watched);
  return read;
}

describe('function environments: what the construct writes is what the runtime reads', () => {
  const written = writtenEnvironments();

  it('finds all six functions in the template', () => {
    expect([...written.keys()].sort()).toEqual(Object.keys(SERVICE).sort());
  });

  for (const name of Object.keys(SERVICE) as (keyof typeof SERVICE)[]) {
    const schema = FUNCTION_ENV[name];
    const declared = Object.keys(schema.shape);
    // What the function cannot start without: the variables an empty environment is refused for.
    const parsed = schema.safeParse({});
    const required = parsed.success ? [] : [...new Set(parsed.error.issues.map((i) => String(i.path[0])))];

    it(`${name}: the construct writes every variable the runtime requires, and only variables it declares`, () => {
      const written = Object.keys(writtenFor(name)).sort();
      expect(required.filter((key) => !written.includes(key))).toEqual([]);
      expect(written.filter((key) => !declared.includes(key))).toEqual([]);
      // Beyond the required ones, only Powertools' own: the tuning variables are left to their defaults.
      expect(written.filter((key) => !required.includes(key) && !WRITTEN_WHEN_USED.includes(key))).toEqual(
        [...POWERTOOLS_ONLY].sort(),
      );
    });

    it(`${name}: starts from the construct's variables alone, reads every one of them and nothing it does not declare`, () => {
      const env = { ...writtenFor(name), AWS_REGION: 'us-east-1' };
      const read = reads(START[name], env);
      const unread = Object.keys(writtenFor(name)).filter(
        (key) => !read.has(key) && !POWERTOOLS_ONLY.includes(key) && !PLATFORM.test(key),
      );
      expect(unread).toEqual([]);
      expect([...read].filter((key) => !declared.includes(key) && !PLATFORM.test(key))).toEqual([]);
    });

    it(`${name}: the test harnesses' environment has the construct's variables`, () => {
      const used = (env: Env) => Object.keys(env).filter((key) => !WRITTEN_WHEN_USED.includes(key));
      expect(used(functionEnv(name)).sort()).toEqual(used(writtenFor(name)).sort());
    });
  }

  function writtenFor(name: keyof typeof SERVICE): Env {
    const env = written.get(name);
    if (!env) throw new Error(`no ${name} function in the template`);
    return env;
  }
});
