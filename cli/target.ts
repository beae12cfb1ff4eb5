import { DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import type { AwsClients } from '../local/aws/clients.ts';
import type { HostedFunction } from '../local/lambda/host.ts';
import { glueDatabaseOf, readLocalConfig } from '../local/state.ts';
import { withBronzeFields } from '../local/summary.ts';
import { parsePipelineConfig } from '../shared/config/pipeline-config.ts';
import { DynamoDbLedger } from '../shared/ingestion/aws/dynamodb-ledger.ts';
import { S3BatchStore } from '../shared/ingestion/aws/s3-batch-store.ts';
import { type AwsTarget, emulatorTarget, targetFromEnv } from '../shared/kernel/aws/target.ts';
import { OUTPUTS } from '../shared/kernel/names.ts';
import { lazyClients } from './clients.ts';
import { CliError } from './errors.ts';

/** Everything a command needs: names, clients and the ports, for local mode or a deployed stack. */
export interface CliTarget {
  readonly where: string;
  readonly clients: AwsClients;
  /** Destroys the clients that were built (their sockets would keep the process alive). */
  close(): void;
  /** Where the clients point: a command that needs one more client (CloudWatch) builds it from this. */
  readonly aws: AwsTarget;
  readonly ledger: DynamoDbLedger;
  readonly store: S3BatchStore;
  readonly landingBucket: string;
  readonly ingestQueueUrl: string;
  readonly ingestDlqUrl: string;
  readonly commitQueueUrl: string;
  readonly commitDlqUrl: string;
  readonly tables: Array<{ name: string; prefix: string }>;
  readonly local: boolean;
  readonly backfillStateMachineArn: string;
  /** Local mode only: the emulator endpoint and region, for the local backfill executor. */
  readonly endpoint?: string;
  readonly region?: string;
  /** Local mode only: the stack's functions and their bundles (the local backfill executor runs them). */
  readonly functions?: readonly HostedFunction[];
}

function explain(error: unknown, stack: string, region: string): CliError {
  const name = (error as Error).name ?? '';
  const message = (error as Error).message ?? String(error);
  if (name === 'CredentialsProviderError' || /credential/i.test(message)) {
    return new CliError(
      `no AWS credentials found (set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY): ${message}`,
    );
  }
  if (/does not exist/.test(message))
    return new CliError(
      `stack '${stack}' not found in region ${region}: deploy it (npx cdk deploy) or set AWS_REGION`,
    );
  if (/Region is missing/i.test(message))
    return new CliError('no AWS region: set AWS_REGION (or AWS_DEFAULT_REGION)');
  return new CliError(`cannot read stack '${stack}' in ${region}: ${name}: ${message}`);
}

interface TargetNames {
  readonly landingBucket: string;
  readonly manifestBucket: string;
  readonly ledgerTable: string;
  readonly ingestQueueUrl: string;
  readonly ingestDlqUrl: string;
  readonly commitQueueUrl: string;
  readonly commitDlqUrl: string;
  readonly tables: Array<{ name: string; prefix: string }>;
  readonly backfillStateMachineArn: string;
  readonly endpoint?: string;
  readonly region?: string;
  readonly functions?: readonly HostedFunction[];
}

function build(
  where: string,
  target: AwsTarget,
  { clients, destroy }: ReturnType<typeof lazyClients>,
  names: TargetNames,
  local: boolean,
): CliTarget {
  const { ledgerTable, manifestBucket, ...rest } = names;
  return {
    where,
    clients,
    close: destroy,
    aws: target,
    ledger: new DynamoDbLedger({ client: clients.dynamodb, tableName: ledgerTable }),
    store: new S3BatchStore({ client: clients.s3, bucket: manifestBucket }),
    local,
    ...rest,
  };
}

/** `--stack NAME`: a deployed stack's outputs; otherwise `.inlet/local.json` from `npm start`. */
export async function resolveTarget(options: { stack?: string }): Promise<CliTarget> {
  if (options.stack) {
    const target = targetFromEnv() ?? { kind: 'aws' as const };
    const region = process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? '(default region)';
    const lazy = lazyClients(target);
    let outputs: Record<string, string>;
    try {
      const { Stacks } = await lazy.clients.cloudformation.send(
        new DescribeStacksCommand({ StackName: options.stack }),
      );
      outputs = Object.fromEntries(
        (Stacks?.[0]?.Outputs ?? []).map((o) => [o.OutputKey ?? '', o.OutputValue ?? '']),
      );
    } catch (error) {
      lazy.destroy();
      throw explain(error, options.stack, region);
    }
    if (!outputs[OUTPUTS.ledgerTable])
      throw new CliError(`stack '${options.stack}' is not an Inlet stack (no ${OUTPUTS.ledgerTable} output)`);
    const manifestBucket = outputs[OUTPUTS.manifestBucket] ?? '';
    // The stack's whole table configuration: each bronze table's location and Glue entry follow from it, as
    // `.inlet/local.json` gives them in local mode.
    const config = parsePipelineConfig({ tables: JSON.parse(outputs[OUTPUTS.tables] ?? '[]') });
    const tables = withBronzeFields(
      config.tables,
      config,
      manifestBucket,
      glueDatabaseOf({ stackName: options.stack, outputs }),
    );
    return build(
      `stack ${options.stack} (${region})`,
      target,
      lazy,
      {
        landingBucket: outputs[OUTPUTS.landingBucket] ?? '',
        ingestQueueUrl: outputs[OUTPUTS.ingestQueueUrl] ?? '',
        ingestDlqUrl: outputs[OUTPUTS.ingestDlqUrl] ?? '',
        commitQueueUrl: outputs[OUTPUTS.commitQueueUrl] ?? '',
        commitDlqUrl: outputs[OUTPUTS.commitDlqUrl] ?? '',
        tables,
        ledgerTable: outputs[OUTPUTS.ledgerTable] ?? '',
        manifestBucket,
        backfillStateMachineArn: outputs[OUTPUTS.backfillStateMachine] ?? '',
      },
      false,
    );
  }
  const local = readLocalConfig();
  if (!local)
    throw new CliError(
      'no local pipeline (.inlet/local.json is missing): run `npm start`, or pass --stack NAME for a deployed stack',
    );
  const aws = emulatorTarget(local.endpoint, local.region);
  return build(
    `local mode (${local.endpoint})`,
    aws,
    lazyClients(aws),
    {
      landingBucket: local.landingBucket,
      ingestQueueUrl: local.ingestQueueUrl,
      ingestDlqUrl: local.ingestDlqUrl,
      commitQueueUrl: local.commitQueueUrl,
      commitDlqUrl: local.commitDlqUrl,
      tables: local.tables,
      ledgerTable: local.ledgerTable,
      manifestBucket: local.manifestBucket,
      backfillStateMachineArn: local.backfillStateMachineArn ?? '',
      endpoint: local.endpoint,
      region: local.region,
      ...(local.functions ? { functions: local.functions } : {}),
    },
    true,
  );
}

export function requireTable(target: CliTarget, table: string): { name: string; prefix: string } {
  const found = target.tables.find((t) => t.name === table);
  if (!found)
    throw new CliError(`unknown table '${table}'; tables: ${target.tables.map((t) => t.name).join(', ')}`);
  return found;
}
