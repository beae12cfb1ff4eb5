// Fixes to installed packages that their pinned release lacks, applied after every `npm ci` / `npm install`
// (the root `postinstall` script). Each fix names the package version it was written for and the exact text
// it replaces: a version bump or a changed file stops the install with a message instead of running unfixed.
// A fix already applied is left as it is, so running this twice changes nothing.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

const FIXES = [
  {
    // aws-local-stepfunctions strips every backslash from the string any intrinsic function returns (to undo
    // the escapes of string literals like 'a\'b'), so States.JsonToString turns {"a":"x\"y"} into invalid
    // JSON. Step Functions returns the escaped JSON text
    // (https://docs.aws.amazon.com/step-functions/latest/dg/intrinsic-functions.html#asl-intrsc-func-json-manipulate).
    // The backfill state machine passes a Lambda task's error payload (a JSON string) and S3 keys (which may
    // hold `"` and `\`) through it.
    package: 'aws-local-stepfunctions',
    version: '3.0.0',
    files: ['build/main.node.esm.js', 'build/main.node.cjs'],
    find: 'if (typeof result === "string") {\n      result = result.replaceAll("\\\\", "");',
    replace:
      'if (typeof result === "string" && this.funcDefinition.name !== "States.JsonToString") {\n      result = result.replaceAll("\\\\", "");',
  },
];

for (const fix of FIXES) {
  const dir = join(root, 'node_modules', fix.package);
  const { version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  if (version !== fix.version)
    throw new Error(
      `local/patch-dependencies.mjs: ${fix.package} is ${version}, the fix was written for ${fix.version}: check whether ${version} still needs it, then update or remove the fix`,
    );
  for (const file of fix.files) {
    const path = join(dir, file);
    const text = readFileSync(path, 'utf8');
    if (text.includes(fix.replace)) continue;
    if (!text.includes(fix.find))
      throw new Error(
        `local/patch-dependencies.mjs: ${fix.package}/${file} no longer has the text the fix replaces`,
      );
    writeFileSync(path, text.replace(fix.find, fix.replace));
  }
}
