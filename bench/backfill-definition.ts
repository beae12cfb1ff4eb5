import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BackfillWorkflow } from '../infra/backfill.ts';

/**
 * The backfill state machine's definition (ASL) exactly as CDK synthesizes it, without a deployment: for
 * running it in the local executor against resources that are not a stack's (the bench). CloudFormation
 * tokens inside it (the function's ARN, the partition) become placeholders: the executor runs the Lambda
 * tasks in-process and never reads them.
 */
export function synthesizeBackfillDefinition(): object {
  const outdir = mkdtempSync(join(tmpdir(), 'inlet-cdk-'));
  try {
    // Without aws-cdk-lib's template validation (seconds of CPU): only the definition is taken from this
    // stand-in stack; the real stack's template is validated where it is tested (test/infra).
    const app = new App({ outdir, builtinCloudFormationValidation: false });
    const stack = new Stack(app, 'BackfillDefinition', {
      env: { account: '000000000000', region: 'us-east-1' },
    });
    // A stand-in function: the tasks' payloads and states are what matter, not its code.
    const fn = new LambdaFunction(stack, 'Fn', {
      runtime: Runtime.NODEJS_22_X,
      handler: 'index.handler',
      code: Code.fromInline('export const handler = async () => ({});'),
    });
    new BackfillWorkflow(stack, 'Backfill', { fn, logRetention: RetentionDays.ONE_DAY });
    const template = app.synth().getStackByName('BackfillDefinition').template as {
      Resources: Record<string, { Type: string; Properties?: { DefinitionString?: unknown } }>;
    };
    const machine = Object.values(template.Resources).find(
      (r) => r.Type === 'AWS::StepFunctions::StateMachine',
    );
    const definition = machine?.Properties?.DefinitionString;
    const text =
      typeof definition === 'string'
        ? definition
        : ((definition as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1] ?? [])
            .map((part) => (typeof part === 'string' ? part : 'local'))
            .join('');
    return JSON.parse(text) as object;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}
