import { readFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type * as Asl from 'aws-local-stepfunctions';

// aws-local-stepfunctions 3.0.0, with one defect fixed as it loads (the package itself is not modified):
// every intrinsic function's string result has all its backslashes removed (meant for the escapes in
// States.Format's literals), so States.JsonToString of an object holding a string with a quote, or any
// escape, is not JSON: `{"a":"{\"x\":1}"}` comes out as `{"a":"{"x":1}"}`. Step Functions returns
// JSON.stringify's text. The backfill's DescribeFailure state passes a failed task's cause (Lambda's JSON
// error document) through it. Its CommonJS build is compiled from the patched text with its own path, so
// its dependencies resolve as they would; if the line is not found, the package changed: revisit this.

const NEEDLE = 'if (typeof result === "string") {';
const FIXED = 'if (typeof result === "string" && this.funcDefinition.name !== "States.JsonToString") {';

function load(): typeof Asl {
  const require = createRequire(import.meta.url);
  const file = require.resolve('aws-local-stepfunctions');
  const source = readFileSync(file, 'utf8');
  if (source.split(NEEDLE).length !== 2)
    throw new Error(
      `aws-local-stepfunctions changed (${file}): revisit local/step-functions/asl-interpreter.ts`,
    );
  const internal = Module as unknown as {
    _nodeModulePaths(from: string): string[];
    new (id: string): Module & { _compile(code: string, filename: string): void };
  };
  const compiled = new internal(file);
  compiled.filename = file;
  compiled.paths = internal._nodeModulePaths(dirname(file));
  compiled._compile(source.replace(NEEDLE, FIXED), file);
  return compiled.exports as typeof Asl;
}

const asl = load();

export const { StateMachine, ExecutionAbortedError, ExecutionTimeoutError } = asl;
export type StateMachine = Asl.StateMachine;
