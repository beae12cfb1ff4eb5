import { DEFAULT_GROUP_LIMITS } from '../ingestion/commit-group.ts';
import { MAX_BATCHES_PER_VERSION } from '../ingestion/ledger.ts';
import { DEFAULTS } from '../kernel/defaults.ts';
import { envSchema, requiredIntVar, requiredVar, tuningIntVar, writeEnv } from '../kernel/env.ts';
import { ConfigError } from '../kernel/errors.ts';
import { ENV, METRICS_NAMESPACE, SERVICE } from '../kernel/names.ts';
import * as z from '../kernel/zod.ts';
import { type PipelineConfig, parsePipelineConfigJson } from './pipeline-config.ts';

/**
 * Each function's environment: every variable its runtime reads (shared/runtime/), which is every variable
 * the construct writes (infra/functions.ts, infra/bronze.ts, through `writeFunctionEnv` below), and nothing
 * else. A required variable is one the construct always writes; the `tuning` ones it leaves unset (their
 * defaults are DEFAULTS), for one deployment or a test to override. A function that cannot start lists
 * every problem at once (a ConfigError).
 */

/** The pipeline configuration, checked as the construct checked it; its problems are listed with the rest. */
const pipelineConfigVar = z.pipe(
  requiredVar(),
  z.transform((raw, ctx): PipelineConfig => {
    try {
      return parsePipelineConfigJson(raw);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      for (const problem of error.problems) ctx.issues.push({ code: 'custom', message: problem, input: raw });
      return z.NEVER;
    }
  }),
);

/** What every function reads. */
const COMMON = {
  [ENV.config]: pipelineConfigVar,
  [ENV.ledgerTable]: requiredVar(),
  [ENV.metricsNamespace]: requiredVar(),
  // Powertools reads these itself; written for it (and for whoever reads the function's configuration).
  [ENV.serviceName]: z.optional(z.string()),
  [ENV.logLevel]: z.optional(z.string()),
};

const schemas = new Map<string, unknown>();
/** `build()` once per name, on first use. */
function built<T>(name: string, build: () => T): T {
  if (!schemas.has(name)) schemas.set(name, build());
  return schemas.get(name) as T;
}

/**
 * Built on first use, one function's at a time: a function parses its own environment at start-up and builds
 * no other function's schema (each is a few zod objects, and a cold start pays for every one built); the
 * construct and the tests, which write every function's, build them all.
 */
export const FUNCTION_ENV = {
  get batcher() {
    return built('batcher', () =>
      envSchema({
        ...COMMON,
        [ENV.manifestBucket]: requiredVar(),
        [ENV.commitQueueUrl]: requiredVar(),
      }),
    );
  },
  get committer() {
    return built('committer', () =>
      envSchema({
        ...COMMON,
        [ENV.manifestBucket]: requiredVar(),
        [ENV.eventBus]: requiredVar(),
        // Group commit: the most a version may cover (GroupLimits); batches are capped by one DynamoDB transaction.
        [ENV.commitMaxBatches]: tuningIntVar(DEFAULT_GROUP_LIMITS.maxBatches, 1, MAX_BATCHES_PER_VERSION),
        [ENV.commitMaxFiles]: tuningIntVar(DEFAULT_GROUP_LIMITS.maxFiles),
        [ENV.commitMaxBytes]: tuningIntVar(DEFAULT_GROUP_LIMITS.maxBytes),
      }),
    );
  },
  get sweeper() {
    return built('sweeper', () =>
      envSchema({
        ...COMMON,
        [ENV.commitQueueUrl]: requiredVar(),
        [ENV.staleAfterSeconds]: requiredIntVar(),
        [ENV.sweepMaxResends]: tuningIntVar(DEFAULTS.sweeper.maxResends),
        [ENV.sweepMarginSeconds]: tuningIntVar(DEFAULTS.sweeper.marginSeconds),
        [ENV.sweepBudgetSeconds]: tuningIntVar(DEFAULTS.sweeper.budgetSeconds),
        [ENV.sweepPageSize]: tuningIntVar(DEFAULTS.sweeper.pageSize),
      }),
    );
  },
  get backfill() {
    return built('backfill', () =>
      envSchema({
        ...COMMON,
        [ENV.landingBucket]: requiredVar(),
        [ENV.ingestQueueUrl]: requiredVar(),
        [ENV.backfillRecordsPerMessage]: requiredIntVar(),
        [ENV.backfillPagesPerStep]: requiredIntVar(),
        [ENV.backfillStepBudgetSeconds]: requiredIntVar(),
        [ENV.backfillStepsPerExecution]: requiredIntVar(),
        // Above 1,000 (S3's most keys per listing page) a page is 1,000 keys.
        [ENV.backfillPageSize]: tuningIntVar(DEFAULTS.backfill.pageSize),
      }),
    );
  },
  get sink() {
    return built('sink', () =>
      envSchema({
        ...COMMON,
        [ENV.manifestBucket]: requiredVar(),
        [ENV.sinkQueueUrl]: requiredVar(),
        [ENV.sinkQueueVisibilitySeconds]: requiredIntVar(),
        // Written only when some bronze table has `catalog` (the construct creates the database then).
        [ENV.glueDatabase]: z.optional(z.string().check(z.minLength(1))),
      }),
    );
  },
  /** Bronze optimize and vacuum: the Delta tables' locations come from the config and the manifest bucket. */
  get maintenance() {
    return built('maintenance', () =>
      envSchema({
        ...COMMON,
        [ENV.manifestBucket]: requiredVar(),
      }),
    );
  },
};

export type FunctionName = keyof typeof FUNCTION_ENV;

/** What every function's environment is written from. */
export interface CommonEnvInputs {
  /** The validated configuration (as the construct parsed it), written as JSON. */
  readonly config: PipelineConfig;
  readonly ledgerTable: string;
}

const common = (name: FunctionName, inputs: CommonEnvInputs) => ({
  [ENV.config]: JSON.stringify(inputs.config),
  [ENV.ledgerTable]: inputs.ledgerTable,
  [ENV.metricsNamespace]: METRICS_NAMESPACE,
  [ENV.serviceName]: SERVICE[name],
  [ENV.logLevel]: 'INFO',
});

/**
 * Each function's environment from what the construct knows (resource names, CloudFormation tokens at synth,
 * and its settings): infra/ deploys these, and a test or bench harness that starts a runtime itself builds its
 * environment with the same writer, so neither can leave out a variable the runtime requires.
 */
export const writeFunctionEnv = {
  maintenance: (inputs: CommonEnvInputs & { readonly manifestBucket: string }) =>
    writeEnv(FUNCTION_ENV.maintenance, {
      ...common('maintenance', inputs),
      [ENV.manifestBucket]: inputs.manifestBucket,
    }),
  batcher: (inputs: CommonEnvInputs & { readonly manifestBucket: string; readonly commitQueueUrl: string }) =>
    writeEnv(FUNCTION_ENV.batcher, {
      ...common('batcher', inputs),
      [ENV.manifestBucket]: inputs.manifestBucket,
      [ENV.commitQueueUrl]: inputs.commitQueueUrl,
    }),
  committer: (inputs: CommonEnvInputs & { readonly manifestBucket: string; readonly eventBus: string }) =>
    writeEnv(FUNCTION_ENV.committer, {
      ...common('committer', inputs),
      [ENV.manifestBucket]: inputs.manifestBucket,
      [ENV.eventBus]: inputs.eventBus,
    }),
  sweeper: (
    inputs: CommonEnvInputs & { readonly commitQueueUrl: string; readonly sweepIntervalSeconds: number },
  ) =>
    writeEnv(FUNCTION_ENV.sweeper, {
      ...common('sweeper', inputs),
      [ENV.commitQueueUrl]: inputs.commitQueueUrl,
      // A batch or reservation is stale once a whole sweep interval has passed over it.
      [ENV.staleAfterSeconds]: inputs.sweepIntervalSeconds,
    }),
  backfill: (
    inputs: CommonEnvInputs & {
      readonly landingBucket: string;
      readonly ingestQueueUrl: string;
      readonly recordsPerMessage: number;
      readonly pagesPerStep: number;
      readonly stepsPerExecution: number;
    },
  ) =>
    writeEnv(FUNCTION_ENV.backfill, {
      ...common('backfill', inputs),
      [ENV.landingBucket]: inputs.landingBucket,
      [ENV.ingestQueueUrl]: inputs.ingestQueueUrl,
      [ENV.backfillRecordsPerMessage]: inputs.recordsPerMessage,
      [ENV.backfillPagesPerStep]: inputs.pagesPerStep,
      [ENV.backfillStepBudgetSeconds]: DEFAULTS.backfill.stepBudgetSeconds,
      [ENV.backfillStepsPerExecution]: inputs.stepsPerExecution,
    }),
  sink: (
    inputs: CommonEnvInputs & {
      readonly manifestBucket: string;
      readonly sinkQueueUrl: string;
      readonly sinkTimeoutSeconds: number;
      readonly glueDatabase?: string;
    },
  ) =>
    writeEnv(FUNCTION_ENV.sink, {
      ...common('sink', inputs),
      [ENV.manifestBucket]: inputs.manifestBucket,
      [ENV.sinkQueueUrl]: inputs.sinkQueueUrl,
      // What a table stopped for good waits for its retry: the queue's visibility timeout (infra/bronze.ts).
      [ENV.sinkQueueVisibilitySeconds]: sinkQueueVisibilitySeconds(inputs.sinkTimeoutSeconds),
      [ENV.glueDatabase]: inputs.glueDatabase,
    }),
} satisfies Record<FunctionName, (inputs: never) => Record<string, string>>;

/** The sink queue's visibility timeout for a sink of this timeout, as Lambda advises for a queue it polls. */
export const sinkQueueVisibilitySeconds = (sinkTimeoutSeconds: number) =>
  sinkTimeoutSeconds * DEFAULTS.queueVisibilityTimeouts;
