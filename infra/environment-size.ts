import { type CfnElement, Stack, Token } from 'aws-cdk-lib';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import type { IConstruct } from 'constructs';
import type { PipelineConfig } from '../shared/config/pipeline-config.ts';

/**
 * Lambda's limit on a function's environment, all variables together. Measured here as their JSON text (keys,
 * values, quotes and escapes), which over-counts a little: a synth that passes must deploy.
 */
export const LAMBDA_ENVIRONMENT_LIMIT_BYTES = 4096;

/**
 * Room left for each value CloudFormation fills in at deploy time (a generated table or bucket name, a queue
 * URL): generated names are the stack name, the logical id and a random suffix, and a queue URL adds about
 * 50 characters to a name of at most 80. Generous on purpose: a synth that passes must deploy.
 */
const DEPLOY_TIME_VALUE_BYTES = 180;

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/** The measured size of an environment, every unresolved value counted at its allowance. */
function environmentBytes(variables: Record<string, unknown>): number {
  let size = 2; // {}
  for (const [key, value] of Object.entries(variables)) {
    const text = typeof value === 'string' && !Token.isUnresolved(value) ? JSON.stringify(value) : undefined;
    size += bytes(JSON.stringify(key)) + 1 + (text === undefined ? DEPLOY_TIME_VALUE_BYTES : bytes(text)) + 1;
  }
  return size;
}

/**
 * Refuses at synth a function whose environment Lambda would reject at deploy: INLET_CONFIG carries every
 * table, so past some number of tables (about 30 short ones) the deploy would fail half-way.
 */
export function checkEnvironmentSize(fn: IConstruct, name: string, config: PipelineConfig): void {
  fn.node.addValidation({
    validate: () => {
      const cfn = fn.node.defaultChild as CfnFunction & CfnElement;
      const resolved = Stack.of(fn).resolve(cfn.environment) as
        | { variables?: Record<string, unknown> }
        | undefined;
      const total = environmentBytes(resolved?.variables ?? {});
      if (total <= LAMBDA_ENVIRONMENT_LIMIT_BYTES) return [];
      const configBytes = (c: PipelineConfig) => bytes(JSON.stringify(JSON.stringify(c)));
      const perTable = (configBytes(config) - configBytes({ ...config, tables: [] })) / config.tables.length;
      const fit = Math.max(
        0,
        Math.floor(
          (LAMBDA_ENVIRONMENT_LIMIT_BYTES -
            (total - configBytes(config) + configBytes({ ...config, tables: [] }))) /
            perTable,
        ),
      );
      return [
        `the ${name} function's environment would be about ${total} bytes (INLET_CONFIG carries ${config.tables.length} tables, about ${Math.round(perTable)} bytes each); Lambda's limit is 4 KB (${LAMBDA_ENVIRONMENT_LIMIT_BYTES} bytes) for all variables together. At most ${fit} tables like these fit: split the tables over two pipelines (stacks), or shorten their prefixes, suffixes and globs.`,
      ];
    },
  });
}
