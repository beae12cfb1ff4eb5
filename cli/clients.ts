import { createRequire } from 'node:module';
import type { AwsClients } from '../local/aws/clients.ts';
import { trackAttempts } from '../shared/kernel/aws/attempts.ts';
import { type AwsTarget, clientConfig } from '../shared/kernel/aws/target.ts';

// The SDK packages are CommonJS (no `exports` map: an ESM import resolves to the same dist-cjs module), so a
// synchronous require on first use loads the very module a static import would.
const require = createRequire(import.meta.url);

/**
 * The same clients as local/aws/clients.ts `createClients`, each built (and its SDK package loaded) on first
 * use: `inlet status` needs three of the eight, and loading the others cost a third of its time.
 */
export function lazyClients(target: AwsTarget): { clients: AwsClients; destroy(): void } {
  const config = clientConfig(target);
  const built = new Map<keyof AwsClients, { destroy(): void }>();
  const make: { [K in keyof AwsClients]: () => AwsClients[K] } = {
    s3: () => new (require('@aws-sdk/client-s3') as typeof import('@aws-sdk/client-s3')).S3Client(config),
    sqs: () => new (require('@aws-sdk/client-sqs') as typeof import('@aws-sdk/client-sqs')).SQSClient(config),
    dynamodb: () =>
      new (require('@aws-sdk/client-dynamodb') as typeof import('@aws-sdk/client-dynamodb')).DynamoDBClient(
        config,
      ),
    sfn: () => new (require('@aws-sdk/client-sfn') as typeof import('@aws-sdk/client-sfn')).SFNClient(config),
    events: () =>
      new (
        require('@aws-sdk/client-eventbridge') as typeof import('@aws-sdk/client-eventbridge')
      ).EventBridgeClient(config),
    cloudformation: () =>
      new (
        require('@aws-sdk/client-cloudformation') as typeof import('@aws-sdk/client-cloudformation')
      ).CloudFormationClient(config),
    lambda: () =>
      new (require('@aws-sdk/client-lambda') as typeof import('@aws-sdk/client-lambda')).LambdaClient(config),
    glue: () =>
      new (require('@aws-sdk/client-glue') as typeof import('@aws-sdk/client-glue')).GlueClient(config),
  };
  const clients = {} as AwsClients;
  for (const name of Object.keys(make) as Array<keyof AwsClients>) {
    Object.defineProperty(clients, name, {
      enumerable: true,
      get() {
        let client = built.get(name);
        if (!client) {
          const fresh = make[name]();
          trackAttempts(fresh);
          built.set(name, fresh);
          client = fresh;
        }
        return client;
      },
    });
  }
  return {
    clients,
    destroy: () => {
      for (const client of built.values()) client.destroy();
      built.clear();
    },
  };
}
