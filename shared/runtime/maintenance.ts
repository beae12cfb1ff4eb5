import { randomUUID } from 'node:crypto';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { S3Client } from '@aws-sdk/client-s3';
import { S3DeltaStore } from '../bronze/aws/s3-delta-store.ts';
import { S3MaintenanceRecords } from '../bronze/aws/s3-maintenance-record.ts';
import { S3SymlinkManifests } from '../bronze/aws/s3-symlink-manifests.ts';
import { S3TableFiles } from '../bronze/aws/s3-table-files.ts';
import type { MaintenanceDeps } from '../bronze/maintenance-handler.ts';
import { FUNCTION_ENV } from '../config/function-env.ts';
import { trackAttempts } from '../kernel/aws/attempts.ts';
import { powertoolsLog } from '../kernel/aws/powertools-log.ts';
import { PowertoolsMetrics } from '../kernel/aws/powertools-metrics.ts';
import { clientConfig, targetFromEnv } from '../kernel/aws/target.ts';
import { systemClock } from '../kernel/clock.ts';
import { readEnv } from '../kernel/env.ts';
import type { Log } from '../kernel/log.ts';
import type { MetricsSink } from '../kernel/metrics.ts';
import { ENV, SERVICE } from '../kernel/names.ts';

/** The maintenance function's dependencies from its environment, built once per container: S3 only. */
export function maintenanceRuntimeFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
  overrides: { readonly log?: Log; readonly metrics?: MetricsSink } = {},
): MaintenanceDeps {
  const vars = readEnv(FUNCTION_ENV.maintenance, env);
  const s3 = new S3Client(clientConfig(targetFromEnv(env) ?? { kind: 'aws' }));
  trackAttempts(s3);
  return {
    config: vars[ENV.config],
    manifestBucket: vars[ENV.manifestBucket],
    tableAt: (bucket, prefix) => ({
      delta: new S3DeltaStore(s3, bucket, prefix),
      files: new S3TableFiles(s3, bucket, prefix),
      manifests: new S3SymlinkManifests(s3, bucket, prefix),
      records: new S3MaintenanceRecords(s3, bucket, prefix),
    }),
    newId: randomUUID,
    log: overrides.log ?? powertoolsLog(SERVICE.maintenance),
    metrics:
      overrides.metrics ??
      new PowertoolsMetrics(
        new Metrics({ namespace: vars[ENV.metricsNamespace], serviceName: SERVICE.maintenance }),
      ),
    ...systemClock,
  };
}
