import { spawn } from 'node:child_process';
import { CreateStackCommand, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DescribeExecutionCommand, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindDeployed } from '../../local/iam/bind.ts';
import type { IamAccess } from '../../local/iam/client.ts';
import type { LambdaInvoker } from '../../local/lambda-invoker.ts';
import { stackResources } from '../../local/stack-resources.ts';
import { ExecutionsApi } from '../../local/step-functions/executions-api.ts';
import { LOCAL_MODE_STOPPED, StepFunctionsExecutor } from '../../local/step-functions/executor.ts';
import type { CfnTemplate } from '../../local/synth.ts';
import { testClients, testTarget, uniqueName } from '../support/aws.ts';
import { awsCliBatch, json } from '../support/aws-cli.ts';
import { deployedRoles, iamCheck } from '../support/iam.ts';
import { historyOf, waitForExecution } from '../support/step-functions.ts';

// Local mode's Step Functions executor against the emulator, on one-task state machines made by
// CloudFormation (no CDK): executions run once, whoever started them and whenever local mode runs, and
// StopExecution stops them; a task's own calls (Invoke, StartExecution) are made as the state machine's
// role, checked by the IAM check. The Lambda task goes through the invoker interface; here a test double
// whose calls the tests hold and count.

const target = testTarget();
const clients = testClients();
const endpoint = target.kind === 'emulator' ? target.endpoint : '';
const stackName = uniqueName('InletSfnExecutor');

const machineName = `${stackName}-Machine`;
const machineArn = {
  'Fn::Join': [
    '',
    [
      'arn:',
      { Ref: 'AWS::Partition' },
      ':states:',
      { Ref: 'AWS::Region' },
      ':',
      { Ref: 'AWS::AccountId' },
      `:stateMachine:${machineName}`,
    ],
  ],
};

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
    // The state machines' own role, as CDK makes one: it may invoke Work and start Machine's executions.
    MachineRole: {
      Type: 'AWS::IAM::Role',
      Properties: {
        AssumeRolePolicyDocument: {
          Version: '2012-10-17',
          Statement: [
            { Effect: 'Allow', Principal: { Service: 'states.amazonaws.com' }, Action: 'sts:AssumeRole' },
          ],
        },
        Policies: [
          {
            PolicyName: 'Tasks',
            PolicyDocument: {
              Version: '2012-10-17',
              Statement: [
                {
                  Effect: 'Allow',
                  Action: 'lambda:InvokeFunction',
                  Resource: { 'Fn::GetAtt': ['Work', 'Arn'] },
                },
                // Named, not referenced: Machine refers to this role (CDK breaks the cycle the same way).
                { Effect: 'Allow', Action: 'states:StartExecution', Resource: machineArn },
              ],
            },
          },
        ],
      },
    },
    Machine: {
      Type: 'AWS::StepFunctions::StateMachine',
      Properties: {
        StateMachineName: machineName,
        RoleArn: { 'Fn::GetAtt': ['MachineRole', 'Arn'] },
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
    // Starts an execution of Machine, as the backfill's continue-as-new starts one of its own.
    Starter: {
      Type: 'AWS::StepFunctions::StateMachine',
      Properties: {
        RoleArn: { 'Fn::GetAtt': ['MachineRole', 'Arn'] },
        DefinitionString: {
          'Fn::Join': [
            '',
            [
              '{"StartAt":"Start","States":{"Start":{"Type":"Task","Resource":"arn:aws:states:::aws-sdk:sfn:startExecution",',
              '"Parameters":{"StateMachineArn":"',
              { Ref: 'Machine' },
              '","Input.$":"States.JsonToString($)"},"End":true}}}',
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
    let starterArn = '';
    let physical: Record<string, string> = {};

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
      const resources = await stackResources(clients, stackName);
      const arnOf = (logicalId: string) => resources.find((r) => r.logicalId === logicalId)?.physicalId ?? '';
      stateMachineArn = arnOf('Machine');
      starterArn = arnOf('Starter');
      physical = Object.fromEntries(resources.map((r) => [r.logicalId, r.physicalId]));
    });

    const executors: StepFunctionsExecutor[] = [];
    const executor = (invoker: LambdaInvoker, iam?: IamAccess) => {
      const created = new StepFunctionsExecutor({
        clients,
        endpoint,
        region: 'us-east-1',
        stackName,
        invoker,
        pollMs: 50,
        ...(iam ? { iam } : {}),
      });
      executors.push(created);
      return created;
    };
    afterAll(async () => {
      await Promise.all(executors.map((e) => e.stop()));
    });

    const start = async (input: unknown, name = uniqueName('run'), machine = stateMachineArn) => {
      const { executionArn } = await clients.sfn.send(
        new StartExecutionCommand({ stateMachineArn: machine, name, input: JSON.stringify(input) }),
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

    /**
     * The template's roles registered with the IAM check, the state machines' role edited by `edit`.
     * Registered as a fixture (its decisions stay out of the calls-vs-grants report: this is not Inlet's stack).
     */
    const roles = async (edit: (statements: unknown[]) => unknown[] = (s) => s) => {
      const bound = bindDeployed(template as unknown as CfnTemplate, physical, 'us-east-1');
      const machine = bound.roles.StateMachine;
      if (!machine) throw new Error('no state machine role in the template');
      const edited = {
        ...bound,
        roles: {
          ...bound.roles,
          StateMachine: {
            ...machine,
            policy: { ...machine.policy, Statement: edit(machine.policy.Statement) as never },
          },
        },
      };
      return deployedRoles(uniqueName('sfn-roles'), edited, { expectDenials: true });
    };

    it.skipIf(!iamCheck())(
      "a task's calls are made as the state machine's role: allowed by its policy, they run",
      async () => {
        const invoker = new HeldInvoker();
        const running = executor(invoker, await roles());
        await running.start();
        const invoked = await start({ n: 9 });
        expect(await waitForExecution(clients.sfn, invoked)).toMatchObject({ status: 'SUCCEEDED' });
        const started = await waitForExecution(
          clients.sfn,
          await start({ n: 10 }, uniqueName('run'), starterArn),
        );
        expect(started.status).toBe('SUCCEEDED');
        const next = (started.output as { ExecutionArn: string }).ExecutionArn;
        expect(await waitForExecution(clients.sfn, next)).toMatchObject({ status: 'SUCCEEDED' });
        expect(invoker.calls).toEqual([{ n: 9 }, { n: 10 }]);
        await running.stop();
      },
    );

    it.skipIf(!iamCheck())(
      'a role that may not invoke the function fails the Lambda task as AWS does (Lambda.AWSLambdaException, AccessDeniedException in the cause); the function never runs',
      async () => {
        const invoker = new HeldInvoker();
        const running = executor(invoker, await roles(() => []));
        await running.start();
        const arn = await start({ n: 11 });
        const ended = await waitForExecution(clients.sfn, arn);
        expect(ended).toMatchObject({ status: 'FAILED', error: 'Lambda.AWSLambdaException' });
        expect(ended.cause).toMatch(
          /^User: arn:aws:sts::\d+:assumed-role\/[^/]+\/StateMachine is not authorized to perform: lambda:InvokeFunction on resource: arn:aws:lambda:us-east-1:\d+:function:[^ ]+ because no identity-based policy allows the lambda:InvokeFunction action \(Service: AWSLambda; Status Code: 403; Error Code: AccessDeniedException; /,
        );
        const failed = (await historyOf(clients.sfn, arn)).find((e) => e.type === 'TaskFailed');
        expect(failed?.taskFailedEventDetails?.error).toBe('Lambda.AWSLambdaException');
        expect(invoker.calls).toEqual([]);
        await running.stop();
      },
    );

    it.skipIf(!iamCheck())(
      'a role that may not start executions fails the StartExecution task as AWS does (Sfn.AccessDeniedException); nothing is started',
      async () => {
        const invoker = new HeldInvoker();
        // The Invoke grant is kept: only StartExecution is refused.
        const running = executor(
          invoker,
          await roles((statements) =>
            statements.filter((s) => (s as { Action: unknown }).Action !== 'states:StartExecution'),
          ),
        );
        await running.start();
        const arn = await start({ n: 12 }, uniqueName('run'), starterArn);
        const ended = await waitForExecution(clients.sfn, arn);
        expect(ended).toMatchObject({ status: 'FAILED', error: 'Sfn.AccessDeniedException' });
        expect(ended.cause).toMatch(
          /is not authorized to perform: states:StartExecution on resource: arn:aws:states:/,
        );
        expect(invoker.calls).toEqual([]);
        await running.stop();
      },
    );
  },
);
