import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { z } from 'zod';
import type { InletStackProps } from './inlet-stack.ts';

/** `cdk.json` context (and `-c key=value` overrides), validated: the deploy-time configuration. */
const contextSchema = z.object({
  stackName: z.string().default('Inlet'),
  tables: z.array(z.object({ name: z.string() }).passthrough()).min(1),
  landingBucketName: z.string().optional(),
  landingBucketVersioned: z
    .union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')])
    .optional(),
  eventMode: z.enum(['s3-notifications', 'eventbridge']).optional(),
  batchSize: z.coerce.number().int().optional(),
  batchingWindowSeconds: z.coerce.number().optional(),
  maxConcurrency: z.coerce.number().int().optional(),
  leaseSeconds: z.coerce.number().int().optional(),
  batcherTimeoutSeconds: z.coerce.number().int().optional(),
  committerTimeoutSeconds: z.coerce.number().int().optional(),
  sweepIntervalSeconds: z.coerce.number().int().optional(),
  backfillRecordsPerMessage: z.coerce.number().int().optional(),
  backfillPagesPerStep: z.coerce.number().int().optional(),
  backfillStepsPerExecution: z.coerce.number().int().optional(),
  /** Buckets S3 Inventory reports are delivered to; with `-c`, comma-separated names. */
  backfillInventoryBuckets: z
    .union([z.array(z.string()), z.string().transform((v) => v.split(',').map((b) => b.trim()))])
    .optional(),
  /** Reconcile schedule in minutes; unset = off. */
  reconcileEveryMinutes: z.coerce.number().int().optional(),
  reconcileLookbackMinutes: z.coerce.number().int().optional(),
  reconcileSettleMinutes: z.coerce.number().int().optional(),
  /**
   * The ledger's capacity (infra/ledger-capacity.ts): `{"mode":"provisioned","writeUnits":{"min":5,"max":4000}}`;
   * with `-c`, that JSON as a string. Unset: on-demand.
   */
  ledgerCapacity: z
    .preprocess(
      (v) => (typeof v === 'string' ? JSON.parse(v) : v),
      z
        .object({
          mode: z.enum(['on-demand', 'provisioned']),
          writeUnits: z.object({ min: z.number(), max: z.number() }).strict().optional(),
          readUnits: z.object({ min: z.number(), max: z.number() }).strict().optional(),
          targetUtilizationPercent: z.number().optional(),
        })
        .strict(),
    )
    .optional(),
  /** The Glue database of the bronze tables (default `<stack name>_bronze`). */
  catalogDatabase: z.string().optional(),
  removalPolicy: z.enum(['retain', 'destroy']).default('retain'),
  deletionProtection: z
    .union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')])
    .default(true),
});

export type InletContext = z.infer<typeof contextSchema>;

/** Reads `inlet:*` keys; a value given with `-c` arrives as a string, so JSON is parsed where needed. */
export function readContext(get: (key: string) => unknown): { stackName: string; props: InletStackProps } {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(contextSchema.shape)) {
    let value = get(`inlet:${key}`);
    if (key === 'tables' && typeof value === 'string') value = JSON.parse(value);
    if (key === 'backfillInventoryBuckets' && typeof value === 'string' && value.startsWith('['))
      value = JSON.parse(value);
    if (value !== undefined) raw[key] = value;
  }
  const parsed = contextSchema.safeParse(raw);
  if (!parsed.success) {
    throw new Error(
      `invalid cdk context:\n- ${parsed.error.issues.map((i) => `inlet:${i.path.join('.')}: ${i.message}`).join('\n- ')}`,
    );
  }
  const c = parsed.data;
  return {
    stackName: c.stackName,
    props: {
      tables: c.tables as unknown as InletStackProps['tables'],
      landingBucketName: c.landingBucketName,
      landingBucketVersioned: c.landingBucketVersioned,
      pipeline: {
        eventMode: c.eventMode,
        batchSize: c.batchSize,
        batchingWindow:
          c.batchingWindowSeconds === undefined ? undefined : Duration.seconds(c.batchingWindowSeconds),
        maxConcurrency: c.maxConcurrency,
        leaseDuration: c.leaseSeconds === undefined ? undefined : Duration.seconds(c.leaseSeconds),
        batcherTimeout:
          c.batcherTimeoutSeconds === undefined ? undefined : Duration.seconds(c.batcherTimeoutSeconds),
        committerTimeout:
          c.committerTimeoutSeconds === undefined ? undefined : Duration.seconds(c.committerTimeoutSeconds),
        sweepInterval:
          c.sweepIntervalSeconds === undefined ? undefined : Duration.seconds(c.sweepIntervalSeconds),
        backfill: {
          recordsPerMessage: c.backfillRecordsPerMessage,
          pagesPerStep: c.backfillPagesPerStep,
          stepsPerExecution: c.backfillStepsPerExecution,
          inventoryBuckets: c.backfillInventoryBuckets,
        },
        reconcile:
          c.reconcileEveryMinutes === undefined
            ? undefined
            : {
                every: Duration.minutes(c.reconcileEveryMinutes),
                lookback:
                  c.reconcileLookbackMinutes === undefined
                    ? undefined
                    : Duration.minutes(c.reconcileLookbackMinutes),
                settle:
                  c.reconcileSettleMinutes === undefined
                    ? undefined
                    : Duration.minutes(c.reconcileSettleMinutes),
              },
        ledgerCapacity: c.ledgerCapacity,
        ...(c.catalogDatabase === undefined ? {} : { bronzeSink: { catalogDatabase: c.catalogDatabase } }),
        removalPolicy: c.removalPolicy === 'destroy' ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
        deletionProtection: c.deletionProtection,
      },
    },
  };
}
