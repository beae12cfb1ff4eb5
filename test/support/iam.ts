/**
 * The IAM check in the integration suite: the run's proxy (global-setup.ts starts it in front of the
 * emulator), and for a test's resources the synthesized template's roles, each function getting clients
 * that sign as its role through the proxy. A request AWS would deny fails the test (iam-setup.ts).
 */
import { inject } from 'vitest';
import { type AwsClients, createClients } from '../../local/aws/clients.ts';
import { bindHarness, type HarnessResources } from '../../local/iam/bind.ts';
import { type Credentials, type IamAccess, IamCheckClient } from '../../local/iam/client.ts';
import type { BoundStack } from '../../local/iam/policies.ts';
import type { CfnTemplate } from '../../local/synth.ts';
import { type AwsTarget, emulatorTarget } from '../../shared/kernel/aws/target.ts';

/** The run's IAM check; undefined on real AWS, and outside vitest (the bench drives the harness too). */
export function iamCheck(): IamCheckClient | undefined {
  let endpoint = '';
  try {
    endpoint = inject('iamProxy');
  } catch {
    return undefined;
  }
  return endpoint ? new IamCheckClient(endpoint) : undefined;
}

const templates = new Map<string, Promise<CfnTemplate>>();

/**
 * The stack's template for these cdk context overrides (`inlet:tables` ...), synthesized once per run and
 * context: the integration project shares one module graph, so CDK loads once.
 */
export function templateFor(context: Record<string, unknown>): Promise<CfnTemplate> {
  const key = JSON.stringify(context);
  let template = templates.get(key);
  if (!template) {
    template = import('../../local/synth.ts').then(({ synthesizeInletStack, removeSynthesized }) => {
      const synthesized = synthesizeInletStack(context, { validate: false });
      removeSynthesized(synthesized);
      return synthesized.template;
    });
    templates.set(key, template);
  }
  return template;
}

export interface FunctionClients {
  readonly stack: BoundStack;
  readonly credentials: Record<string, Credentials>;
  /** The clients a function (Batcher, Committer, Sweeper, Backfill, Sink) makes its calls with. */
  of(owner: string): AwsClients;
  destroy(): void;
}

/**
 * Registers the template's roles bound to a test's resources, and gives each function clients that sign
 * as its role through the proxy. Undefined when the suite runs on real AWS (its own IAM applies there).
 */
export async function functionClients(options: {
  readonly label: string;
  readonly context: Record<string, unknown>;
  readonly resources: HarnessResources;
  readonly target: () => AwsTarget;
  /** How the function's clients are built (the fault tests' short backoff). @default createClients */
  readonly make?: (target: AwsTarget) => AwsClients;
  /** The template edited before binding: a fixture with a grant cut, whose denials the test expects. */
  readonly edit?: (template: CfnTemplate) => CfnTemplate;
}): Promise<FunctionClients | undefined> {
  const check = iamCheck();
  const target = check && options.target();
  if (!check || target?.kind !== 'emulator') return undefined;
  const template = await templateFor(options.context);
  const edited = options.edit ? options.edit(structuredClone(template)) : template;
  const stack = bindHarness(edited, options.resources, target.region);
  const credentials = await check.register(options.label, stack, {
    expectDenials: options.edit !== undefined,
  });
  const sets = new Map<string, AwsClients>();
  const make = options.make ?? createClients;
  return {
    stack,
    credentials,
    of(owner) {
      let set = sets.get(owner);
      const creds = credentials[owner];
      if (!creds) throw new Error(`the template has no role for ${owner}`);
      if (!set) {
        set = make(emulatorTarget(check.endpoint, target.region, creds));
        sets.set(owner, set);
      }
      return set;
    },
    destroy() {
      for (const set of sets.values()) for (const client of Object.values(set)) client.destroy();
    },
  };
}

/**
 * A stack deployed to the emulator (LocalStack: its template bound to what CloudFormation created),
 * registered with the run's IAM check: what the `iam` option of LocalRunner and
 * StepFunctionsExecutor takes. `expectDenials`: a fixture with a grant cut, whose denials the test asserts.
 */
export async function deployedRoles(
  label: string,
  stack: BoundStack,
  options: { expectDenials?: boolean } = {},
): Promise<IamAccess | undefined> {
  const check = iamCheck();
  if (!check) return undefined;
  return { endpoint: check.endpoint, credentials: await check.register(label, stack, options) };
}
