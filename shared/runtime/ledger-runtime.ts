import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { PipelineConfig } from '../config/pipeline-config.ts';
import { DynamoDbLedger } from '../ingestion/aws/dynamodb-ledger.ts';
import type { Ledger, LedgerQueries } from '../ingestion/ledger.ts';
import { trackAttempts } from '../kernel/aws/attempts.ts';
import { powertoolsLog } from '../kernel/aws/powertools-log.ts';
import { PowertoolsMetrics } from '../kernel/aws/powertools-metrics.ts';
import { clientConfig, targetFromEnv } from '../kernel/aws/target.ts';
import { systemClock } from '../kernel/clock.ts';
import type { Log } from '../kernel/log.ts';
import type { MetricsSink } from '../kernel/metrics.ts';
import { ENV } from '../kernel/names.ts';

// What the ledger's functions (batcher, committer, sweeper, backfill) share. Each function's wiring is a file
// of its own that imports only the clients and adapters it calls: a Lambda bundle holds every module its
// entry imports, and whatever runs at a module's top level runs at each cold start, used or not.

export type Env = Readonly<Record<string, string | undefined>>;

/** What every ledger function's environment holds (FUNCTION_ENV), parsed. */
interface CommonVars {
  readonly [ENV.config]: PipelineConfig;
  readonly [ENV.ledgerTable]: string;
  readonly [ENV.metricsNamespace]: string;
}

/** What local mode and tests swap in: logs to a file or memory, metrics in memory. */
export interface RuntimeOverrides {
  readonly log?: Log;
  readonly metrics?: MetricsSink;
}

/** The ledger adapter also answers operators' queries (local mode's summary and CLI read it from a runtime). */
export type WithOperatorQueries = { readonly ledger: Ledger & LedgerQueries };

/**
 * What every ledger function builds: configuration, logger, metrics and the ledger (its DynamoDB client).
 * Each function then adds only the clients it calls: loading an SDK client package is the larger part of a
 * cold start (docs/performance.md, "Cold starts"), so a bundle must not carry one it never uses.
 */
export function baseRuntime(service: string, vars: CommonVars, env: Env, overrides: RuntimeOverrides) {
  const config: PipelineConfig = vars[ENV.config];
  const aws = clientConfig(targetFromEnv(env) ?? { kind: 'aws' });
  const metrics = new PowertoolsMetrics(
    new Metrics({ namespace: vars[ENV.metricsNamespace], serviceName: service }),
  );
  const ledger = new DynamoDbLedger({
    client: tracked(new DynamoDBClient(aws)),
    tableName: vars[ENV.ledgerTable],
    clock: systemClock,
  });
  return {
    config,
    aws,
    log: overrides.log ?? powertoolsLog(service),
    metrics: overrides.metrics ?? metrics,
    ledger,
    ...systemClock,
  };
}

/** Every client's attempts are watched: an error after an applied attempt must not read as "not applied". */
export function tracked<C extends Parameters<typeof trackAttempts>[0]>(client: C): C {
  trackAttempts(client);
  return client;
}
