import { type IamAccess, IamCheckClient } from '../iam/client.ts';

/** IAM refused a call a task makes: the message is the one AWS answers with (role, action, resource). */
export class AccessDeniedError extends Error {
  constructor(message: string) {
    super(message);
    // The error code the service answers with; the task integrations name their errors after it.
    this.name = 'AccessDeniedException';
  }
}

/**
 * The state machine's execution role, for the calls Step Functions makes itself in a task (Lambda's Invoke
 * for `lambda:invoke`, StartExecution for `aws-sdk:sfn:startExecution`): Step Functions makes them with
 * the role's credentials, which must allow each (IAM policies for integrated services,
 * https://docs.aws.amazon.com/step-functions/latest/dg/service-integration-iam-templates.html), so each is
 * authorized against the role's policy from the template before it is made, and a denial fails
 * the task as AWS's answer would. Without the IAM check (no `iam`), every call is allowed.
 */
export class StateMachineRole {
  private readonly client?: IamCheckClient;

  constructor(private readonly iam?: IamAccess) {
    if (iam) this.client = new IamCheckClient(iam.endpoint);
  }

  /** Resolves when the role may make the call; AccessDeniedError otherwise. */
  async authorize(operation: string, action: string, resource: string): Promise<void> {
    if (!this.client) return;
    // The IAM check registers the role of a stack's state machine as `StateMachine`.
    const credentials = this.iam?.credentials.StateMachine;
    if (!credentials) throw new Error('IAM check: the registered stack has no state machine role');
    const decision = await this.client.authorize(credentials, operation, [{ action, resource, context: {} }]);
    if (!decision.allowed)
      throw new AccessDeniedError(
        decision.message ?? `the state machine's role may not ${action} on ${resource}`,
      );
  }
}
