/**
 * What an integration file that runs the functions' bundles awaits at its top level, where no hook timeout
 * applies (on a busy machine the runtime client's native build takes minutes): `npm test` builds the Lambda
 * runtime beside the unit project and the files that need only the emulator (test/run.ts), and runs the
 * files of ./runs-bundles.ts last.
 */
import { ensureLambdaRuntime } from '../../local/lambda/install.ts';
import { testTarget } from './aws.ts';

/** Resolves once the Lambda runtime is installed (installing it, or waiting for the install under way). */
export async function waitForLambdaRuntime(): Promise<void> {
  if (testTarget().kind === 'emulator') await ensureLambdaRuntime();
}
