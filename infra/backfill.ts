import { ArnFormat, type CfnElement, Duration, Names, Stack, Validations } from 'aws-cdk-lib';
import { Rule, RuleTargetInput, Schedule } from 'aws-cdk-lib/aws-events';
import { SfnStateMachine } from 'aws-cdk-lib/aws-events-targets';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  Choice,
  Condition,
  DefinitionBody,
  Fail,
  JitterType,
  JsonPath,
  LogLevel,
  Map as MapState,
  Pass,
  StateMachine,
  Succeed,
  TaskInput,
} from 'aws-cdk-lib/aws-stepfunctions';
import { CallAwsService, LambdaInvoke } from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { DEFAULTS } from '../shared/kernel/defaults.ts';
import { BACKFILL_STATES, RETRYABLE_ERRORS } from '../shared/kernel/names.ts';
import type { ReconcileProps } from './props.ts';

export interface BackfillWorkflowProps {
  readonly fn: IFunction;
  readonly logRetention: RetentionDays;
  /** Reconcile schedule, per table; none by default. */
  readonly reconcile?: ReconcileProps & { readonly tables: readonly string[] };
}

/** State names: defined in shared/kernel/names.ts (the CLI finds the progress in a history by them). */
export { BACKFILL_STATES };

/**
 * The backfill state machine (docs/operations.md): Plan validates the input and splits the keys into
 * partitions (key ranges at common prefixes, the reconcile window's prefixes, or an inventory's files).
 * An inline Map runs the partitions `concurrency` at a time, each looping Step (up to 20 pages, listing a
 * page ahead of the ledger look-ups and enqueues) for its share of the execution's steps. Merge adds the
 * round up: done, or continue as a new execution with each partition's cursor (continue-as-new), so no
 * execution nears the 25,000-event history limit however large the bucket. Throttling is retried with
 * backoff and jitter; a partition that fails otherwise ends its iteration with its failure (Catch), the
 * others finish their round, and the run fails naming every partition's resume point.
 */
export class BackfillWorkflow extends Construct {
  readonly stateMachine: StateMachine;
  readonly reconcileRules: Rule[] = [];

  constructor(scope: Construct, id: string, props: BackfillWorkflowProps) {
    super(scope, id);
    const S = BACKFILL_STATES;
    const stack = Stack.of(this);
    // Named, so its own ARN can be granted to it (continue-as-new) without a dependency cycle.
    const stateMachineName = Names.uniqueResourceName(this, { maxLength: 80 });
    const selfArn = stack.formatArn({
      service: 'states',
      resource: 'stateMachine',
      resourceName: stateMachineName,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });

    const plan = new LambdaInvoke(this, S.plan, {
      lambdaFunction: props.fn,
      payload: TaskInput.fromObject({
        action: 'plan',
        input: JsonPath.entirePayload,
        execution: {
          name: JsonPath.stringAt('$$.Execution.Name'),
          startTime: JsonPath.stringAt('$$.Execution.StartTime'),
        },
      }),
      outputPath: '$.Payload',
    });
    // Plan lists common prefixes (or reads an inventory manifest): throttling there is retried too.
    plan.addRetry({
      errors: [RETRYABLE_ERRORS.throttled, RETRYABLE_ERRORS.transient, 'Lambda.TooManyRequestsException'],
      interval: Duration.seconds(2),
      backoffRate: 2,
      maxAttempts: 6,
      jitterStrategy: JitterType.FULL,
    });
    const step = new LambdaInvoke(this, S.step, {
      lambdaFunction: props.fn,
      payload: TaskInput.fromObject({ action: 'step', state: JsonPath.entirePayload }),
      outputPath: '$.Payload',
    });
    step.addRetry({
      errors: [RETRYABLE_ERRORS.throttled, RETRYABLE_ERRORS.transient, 'Lambda.TooManyRequestsException'],
      interval: Duration.seconds(2),
      backoffRate: 2,
      maxAttempts: 8,
      maxDelay: Duration.minutes(1),
      jitterStrategy: JitterType.FULL,
    });
    // A failed partition ends its own iteration with its cursor before the failed step: the others finish
    // their round, and Merge reports every partition's resume point (a failed Map would lose them all).
    const partitionFailed = new Pass(this, S.partitionFailed, {
      parameters: {
        partition: JsonPath.objectAt('$.partition'),
        totals: JsonPath.objectAt('$.totals'),
        done: false,
        failure: JsonPath.objectAt('$.failure'),
      },
    });
    step.addCatch(partitionFailed, { errors: ['States.ALL'], resultPath: '$.failure' });
    const partitionEnd = new Pass(this, S.partitionEnd, {
      parameters: {
        partition: JsonPath.objectAt('$.partition'),
        totals: JsonPath.objectAt('$.totals'),
        done: JsonPath.objectAt('$.done'),
      },
    });
    const partitionNext = new Choice(this, S.partitionNext)
      .when(Condition.stringEquals('$.next', 'step'), step)
      .otherwise(partitionEnd);
    step.next(partitionNext);

    const partitions = new MapState(this, S.partitions, {
      itemsPath: '$.pending',
      // An inline Map runs at most 40 iterations at once whatever is asked; the input chooses below that.
      maxConcurrencyPath: '$.plan.concurrency',
      itemSelector: {
        plan: JsonPath.objectAt('$.plan'),
        partition: JsonPath.objectAt('$$.Map.Item.Value'),
        totals: { listed: 0, matched: 0, enqueued: 0, alreadyIngested: 0, wouldEnqueue: 0 },
        steps: 0,
        maxSteps: JsonPath.numberAt('$.stepsPerPartition'),
        next: 'step',
        done: false,
      },
      resultPath: '$.results',
    });
    partitions.itemProcessor(step);
    const merge = new LambdaInvoke(this, S.merge, {
      lambdaFunction: props.fn,
      // The state holds the results (the Map's ResultPath): sent once, for a task's input is held to
      // 256 KiB like a state's.
      payload: TaskInput.fromObject({ action: 'merge', state: JsonPath.objectAt('$') }),
      outputPath: '$.Payload',
    });
    merge.addRetry({
      errors: ['Lambda.TooManyRequestsException', 'Lambda.ServiceException'],
      maxAttempts: 4,
      jitterStrategy: JitterType.FULL,
    });
    // Merge wrote the cause (the summary with the resume points, and the failure), within the 32,768
    // characters an execution's cause may have.
    const describeFailure = new Pass(this, S.describeFailure, {
      parameters: {
        error: JsonPath.stringAt('$.failed.error'),
        cause: JsonPath.stringAt('$.failed.cause'),
      },
    });
    describeFailure.next(new Fail(this, S.failed, { errorPath: '$.error', causePath: '$.cause' }));

    const continueAsNew = new CallAwsService(this, S.continueAsNew, {
      service: 'sfn',
      action: 'startExecution',
      parameters: {
        StateMachineArn: JsonPath.stringAt('$$.StateMachine.Id'),
        Name: JsonPath.stringAt('$.continuation.name'),
        Input: JsonPath.jsonToString(JsonPath.objectAt('$.continuation.input')),
      },
      iamResources: [selfArn],
      resultSelector: { continuedAs: JsonPath.stringAt('$.ExecutionArn') },
      resultPath: '$.link',
    });
    // Same name, same input: StartExecution is idempotent, so retrying a lost response is safe.
    continueAsNew.addRetry({ errors: ['States.ALL'], maxAttempts: 4, jitterStrategy: JitterType.FULL });
    const continued = new Pass(this, S.continued, {
      parameters: { output: JsonPath.jsonMerge(JsonPath.objectAt('$.summary'), JsonPath.objectAt('$.link')) },
      outputPath: '$.output',
    });
    const done = new Succeed(this, S.done, { outputPath: '$.summary' });

    const next = new Choice(this, S.next)
      .when(Condition.stringEquals('$.next', 'done'), done)
      .when(Condition.stringEquals('$.next', 'continue'), continueAsNew.next(continued))
      .when(Condition.stringEquals('$.next', 'failed'), describeFailure)
      .otherwise(partitions);
    plan.next(partitions);
    partitions.next(merge);
    merge.next(next);

    this.stateMachine = new StateMachine(this, 'StateMachine', {
      stateMachineName,
      definitionBody: DefinitionBody.fromChainable(plan),
      tracingEnabled: true,
      logs: {
        // Under /aws/vendedlogs/: CloudWatch Logs then needs no per-log-group resource policy entry, whose
        // 5,120-character limit a few state machines exhaust.
        destination: new LogGroup(this, 'Logs', {
          logGroupName: `/aws/vendedlogs/states/${stateMachineName}`,
          retention: props.logRetention,
        }),
        level: LogLevel.ALL,
        includeExecutionData: true,
      },
      comment: 'Inlet backfill / reprocess / reconcile: lists S3, enqueues files the ledger has not seen.',
    });
    const fnId = stack.resolve((props.fn.node.defaultChild as CfnElement).logicalId) as string;
    for (const [resource, reason] of [
      [
        `<${fnId}.Arn>:*`,
        'Invoke of the backfill function and its versions: how the Lambda task integration grants it.',
      ],
      ['*', 'X-Ray tracing and CloudWatch Logs delivery: these actions take no resource-level permissions.'],
    ] as const) {
      Validations.of(this.stateMachine).acknowledge({
        id: `AwsSolutions-IAM5[Resource::${resource}]`,
        reason,
      });
    }

    if (props.reconcile) {
      const every = props.reconcile.every;
      const settle = props.reconcile.settle ?? Duration.minutes(DEFAULTS.reconcileSettleMinutes);
      const lookback =
        props.reconcile.lookback ?? Duration.seconds(every.toSeconds() * 2 + settle.toSeconds());
      for (const table of props.reconcile.tables) {
        this.reconcileRules.push(
          new Rule(this, `Reconcile-${table}`, {
            description: `Inlet reconcile of ${table}: enqueue files the ledger never saw`,
            schedule: Schedule.rate(every),
            targets: [
              new SfnStateMachine(this.stateMachine, {
                input: RuleTargetInput.fromObject({
                  table,
                  mode: 'reconcile',
                  lookbackSeconds: lookback.toSeconds(),
                  settleSeconds: settle.toSeconds(),
                }),
                retryAttempts: 4,
              }),
            ],
          }),
        );
      }
    }
  }
}
