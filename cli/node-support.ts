// Imported by every entry point (`inlet`, `npm start`) at load time. The SDK checks its opt-out when a
// client is built (each client's getRuntimeConfig), which only happens later, inside a command.

/** The oldest Node major this project runs and is tested on; package.json `engines` says the same. */
export const OLDEST_NODE = 20;
/** The AWS SDK for JavaScript v3 requires Node 22 in releases after the first week of January 2027. */
export const SDK_NODE = 22;

// The SDK's own opt-out (@aws-sdk/core emitWarningIfUnsupportedVersion; the variable is announced in
// https://github.com/aws/aws-sdk-js-v3/issues/7983): without it the first client built prints an eight-line
// NodeVersionSupportWarning. Only that warning is turned off; other warnings still print. Set here, it also
// reaches the child processes we spawn (the backfill worker), which inherit process.env.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

/** Our one line in place of the SDK's block, or nothing on Node 22 and later. */
export function nodeSupportLine(version = process.versions.node): string | undefined {
  const major = Number.parseInt(version, 10);
  if (major >= SDK_NODE) return undefined;
  return `Node ${major} is end-of-life; Inlet runs on it today, but use Node ${SDK_NODE}+ (the AWS SDK requires it from January 2027)`;
}

let said = false;

/** Says it once per process, on stderr, so stdout (`--json`) stays clean. */
export function sayNodeSupport(prefix: string): void {
  const line = nodeSupportLine();
  if (said || !line) return;
  said = true;
  process.stderr.write(`${prefix}${line}\n`);
}
