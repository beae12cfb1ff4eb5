import { paginateListStackResources } from '@aws-sdk/client-cloudformation';
import type { AwsClients } from './aws/clients.ts';

/** One resource of a stack deployed to the emulator, as CloudFormation lists it. */
export interface StackResource {
  readonly logicalId: string;
  readonly physicalId: string;
  readonly type: string;
}

/** Every resource of the stack (local mode's functions and state machines are found by type and logical ID). */
export async function stackResources(clients: AwsClients, stackName: string): Promise<StackResource[]> {
  const resources: StackResource[] = [];
  for await (const page of paginateListStackResources(
    { client: clients.cloudformation },
    { StackName: stackName },
  )) {
    for (const r of page.StackResourceSummaries ?? [])
      resources.push({
        logicalId: r.LogicalResourceId ?? '',
        physicalId: r.PhysicalResourceId ?? '',
        type: r.ResourceType ?? '',
      });
  }
  return resources;
}
