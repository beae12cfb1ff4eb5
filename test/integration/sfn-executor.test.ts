import { spawn } from 'node:child_process';
import { CreateStackCommand, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DescribeExecutionCommand, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LambdaInvoker } from '../../local/lambda-invoker.ts';
import { stackResources } from '../../local/stack-resources.ts';
import { ExecutionsApi } from '../../local/step-functions/executions-api.ts';
import { LOCAL_MODE_STOPPED, StepFunctionsExecutor } from '../../local/step-functions/executor.ts';
import { testClients, testTarget, uniqueName } from '../support/aws.ts';
import { awsCliBatch, json } from '../support/aws-cli.ts';
import { historyOf, waitForExecution } from '../support/step-functions.ts';

// Local mode's Step Functions executor against the emulator, on a one-task state machine made by
// CloudFormation (no CDK): executions run once, whoever started them and whenever local mode runs, and
// StopExecution stops them. The Lambda task goes through the invoker interface; here a test double whose
// calls the tests hold and count.

const target = testTarget();
const clients = testClients();
const endpoint = target.kind === 'emulator' ? target.endpoint : '';
const stackName = uniqueName('InletSfnExecutor');

const template = {
  Resources: {
    Role: {
      Type: 'AWS::IAM::Role',
      Properties: {
        AssumeRolePolicyDocument: {
          Version: '2012-10-17',
          Statement: [
            { Effect: 'Allow', Principal: { Service: 'states.amazonaws.com' }, Action: 'sts:AssumeRole' },
          ],
        },
      },
    },
    Work: {
      Type: 'AWS::Lambda::Function',
      Properties: {
        Runtime: 'nodejs22.x',
        Handler: 'index.handler',
        Role: { 'Fn::GetAtt': ['Role', 'Arn'] },
        Code: { ZipFile: 'exports.handler = async (event) => event;' },
      },
    },
    Machine: {
      Type: 'AWS::StepFunctions::StateMachine',
      Properties: {
        RoleArn: { 'Fn::GetAtt': ['Role', 'Arn'] },
        DefinitionString: {
          'Fn::Join': [
            '',
            [
              '{"StartAt":"Work","States":{"Work":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",',
              '"Parameters":{"FunctionName":"',
              { 'Fn::GetAtt': ['Work', 'Arn'] },
              '","Payload.$":"$"},"OutputPath":"$.Payload","End":true}}}',
            ],
          ],
        },
      },
    },
  },
};

/** The Lambda task's function: records each call; a call waits while the gate is held. */
class HeldInvoker implements LambdaInvoker {
  readonly calls: unknown[] = [];
  private gate?: { promise: Promise<void>; open: () => void };
  entered?: () => void;

  hold(): Promise<void> {
    let open!: () => void;
    const promise = new Promise<void>((resolve) => {
      open = resolve;
    });
    this.gate = { promise, open };
    return new Promise((resolve) => {
      this.entered = resolve;
    });
  }

  release(): void {
    this.gate?.open();
    this.gate = undefined;
  }

  async invoke(_functionLogicalId: string, payload: unknown) {
    this.calls.push(payload);
    this.entered?.();
    await this.gate?.promise;
    return { payload: { ran: payload } };
  }
}

describe.skipIf(target.kind !== 'emulator')(
  'local Step Functions: who runs an execution, and how often',
  () => {
    let stateMachineArn = '';

    beforeAll(async () => {
      await clients.cloudformation.send(
        new CreateStackCommand({ StackName: stackName, TemplateBody: JSON.stringify(template) }),
      );
      for (;;) {
        const { Stacks } = await clients.cloudformation.send(
          new DescribeStacksCommand({ StackName: stackName }),
        );
        if (Stacks?.[0]?.StackStatus === 'CREATE_COMPLETE') break;
        if (Stacks?.[0]?.StackStatus?.endsWith('FAILED'))
          throw new Error(`stack: ${Stacks[0].StackStatusReason}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      stateMachineArn =
        (await stackResources(clients, stackName)).find((r) => r.type === 'AWS::StepFunctions::StateMachine')
          ?.physicalId ?? '';
    });

    const executors: StepFunctionsExecutor[] = [];
    const executor = (invoker: LambdaInvoker) => {
      const created = new StepFunctionsExecutor({
        clients,
        endpoint,
        region: 'us-east-1',
        stackName,
        invoker,
        pollMs: 50,
      });
      executors.push(created);
      return created;
    };
    afterAll(async () => {
      await Promise.all(executors.map((e) => e.stop()));
    });

    const start = async (input: unknown, name = uniqueName('run')) => {
      const { executionArn } = await clients.sfn.send(
        new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(input) }),
      );
      return executionArn ?? '';
    };
    const status = async (executionArn: string) =>
      (await clients.sfn.send(new DescribeExecutionCommand({ executionArn }))).status;

    it('an execution started while local mode is not running waits, RUNNING, and runs once local mode starts', async () => {
      const arn = await start({ n: 1 });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await status(arn)).toBe('RUNNING');
      const invoker = new HeldInvoker();
      const running = executor(invoker);
      await running.start();
      const ended = await waitForExecution(clients.sfn, arn);
      expect(ended).toMatchObject({ status: 'SUCCEEDED', output: { ran: { n: 1 } } });
      expect(invoker.calls).toEqual([{ n: 1 }]);
      const types = (await historyOf(clients.sfn, arn)).map((e) => e.type);
      expect(types).toEqual([
        'ExecutionStarted',
        'TaskStateEntered',
        'TaskScheduled',
        'TaskStarted',
        'TaskSucceeded',
        'TaskStateExited',
        'ExecutionSucceeded',
      ]);
      await running.stop();
    });

    it('StopExecution aborts a running execution: the interpreter stops, what its task returns later is not recorded', async () => {
      const invoker = new HeldInvoker();
      const running = executor(invoker);
      await running.start();
      const entered = invoker.hold();
      const arn = await start({ n: 2 });
      await entered;
      // As an operator stops it: the AWS CLI.
      const [stopped, described] = await awsCliBatch(endpoint, [
        [
          'stepfunctions',
          'stop-execution',
          '--execution-arn',
          arn,
          '--error',
          'Operator',
          '--cause',
          'stop it',
        ],
        ['stepfunctions', 'describe-execution', '--execution-arn', arn],
      ]);
      expect(json(stopped).stopDate).toEqual(expect.any(Number));
      expect(json(described)).toMatchObject({
        status: 'ABORTED',
        error: 'Operator',
        cause: 'stop it',
        stopDate: json(stopped).stopDate,
        redriveStatus: 'REDRIVABLE',
      });
      invoker.release();
      await running.idle();
      const history = await historyOf(clients.sfn, arn);
      expect(history.at(-1)).toMatchObject({
        type: 'ExecutionAborted',
        executionAbortedEventDetails: { error: 'Operator', cause: 'stop it' },
      });
      expect(history.map((e) => e.type)).not.toContain('TaskSucceeded');
      expect(await status(arn)).toBe('ABORTED');
      await running.stop();
    });

    it('local mode stopped mid-run fails the execution as interrupted; the next local mode does not run it again', async () => {
      const invoker = new HeldInvoker();
      const first = executor(invoker);
      await first.start();
      const entered = invoker.hold();
      const arn = await start({ n: 3 });
      await entered;
      await first.stop();
      invoker.release();
      expect(await waitForExecution(clients.sfn, arn)).toMatchObject({
        status: 'FAILED',
        error: LOCAL_MODE_STOPPED,
      });
      const second = executor(invoker);
      await second.start();
      await second.stop();
      expect(invoker.calls.filter((c) => (c as { n: number }).n === 3)).toHaveLength(1);
    });

    it('local mode killed mid-run (its process gone): the next one fails the execution instead of running it twice', async () => {
      const arn = await start({ n: 4 });
      // The execution claimed by a process that has exited, as a SIGKILLed `npm start` leaves it.
      const gone = spawn(process.execPath, ['-e', '']);
      await new Promise((resolve) => gone.once('exit', resolve));
      await new ExecutionsApi(endpoint).claim(
        { id: 'killed-local-mode', pid: gone.pid ?? 0 },
        [stateMachineArn],
        [],
      );
      const invoker = new HeldInvoker();
      const next = executor(invoker);
      await next.start();
      expect(await waitForExecution(clients.sfn, arn)).toMatchObject({
        status: 'FAILED',
        error: LOCAL_MODE_STOPPED,
      });
      expect(invoker.calls).toEqual([]);
      await next.stop();
    });

    it('two local modes on one emulator run each execution once', async () => {
      const invoker = new HeldInvoker();
      const [a, b] = [executor(invoker), executor(invoker)];
      await Promise.all([a.start(), b.start()]);
      const arns = await Promise.all([5, 6, 7, 8].map((n) => start({ n })));
      for (const arn of arns) expect((await waitForExecution(clients.sfn, arn)).status).toBe('SUCCEEDED');
      expect(invoker.calls.map((c) => (c as { n: number }).n).sort()).toEqual([5, 6, 7, 8]);
      await Promise.all([a.stop(), b.stop()]);
    });
  },
);
