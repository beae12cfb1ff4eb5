import { ConfigError } from './errors.ts';
import type { EnvName } from './names.ts';
import * as z from './zod.ts';
import { issueLines } from './zod.ts';

/**
 * A function's environment as one schema, keyed by variable name (`ENV`): the function's runtime reads
 * through it (`readEnv`), the construct and the test harnesses write through it (`writeEnv`), so a variable
 * one side needs and the other forgets is a type error or a failing test, not a failed cold start.
 */
export type EnvSchema = z.ZodMiniObject<{ readonly [name: string]: z.ZodMiniType }>;

/** The values a writer passes: a required variable must be given; numbers are written as their digits. */
export type EnvValues<S extends EnvSchema> = { [K in keyof z.input<S>]: string | number };

type Env = Readonly<Record<string, string | undefined>>;

/** A schema over `shape`, whose keys can only be names from `ENV`. */
export function envSchema<const S extends Readonly<Record<string, z.ZodMiniType>>>(
  shape: S & Readonly<Record<Exclude<keyof S, EnvName>, never>>,
) {
  return z.object(shape as S);
}

/** Every problem with `env` at once, as one ConfigError naming each variable; else the parsed values. */
export function readEnv<S extends EnvSchema>(schema: S, env: Env): z.output<S> {
  const result = schema.safeParse(env);
  if (!result.success) throw new ConfigError(issueLines(result.error));
  return result.data;
}

/** The environment `values` describe, as Lambda takes it (strings only; an absent optional one left out). */
export function writeEnv<S extends EnvSchema>(schema: S, values: EnvValues<S>): Record<string, string> {
  const given = values as Record<string, string | number | undefined>;
  const unknown = Object.keys(given).filter((name) => !(name in schema.shape));
  if (unknown.length > 0)
    throw new ConfigError(unknown.map((name) => `${name}: this function does not read it`));
  const written: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) if (value !== undefined) written[name] = String(value);
  return written;
}

const NOT_SET = 'environment variable is not set';

/** A variable the function cannot start without; empty counts as not set. */
export const requiredVar = () => z.string({ error: NOT_SET }).check(z.minLength(1, NOT_SET));

/** A whole number from `min` to `max`: the message every number variable gives. */
function wholeNumber(raw: string, min: number, max: number, ctx: { readonly issues: z.core.$ZodRawIssue[] }) {
  const value = Number(raw);
  if (raw.trim() !== '' && Number.isSafeInteger(value) && value >= min && value <= max) return value;
  const range =
    max === Number.MAX_SAFE_INTEGER
      ? `a whole number of at least ${min}`
      : `a whole number from ${min} to ${max}`;
  ctx.issues.push({ code: 'custom', message: `must be ${range}, got ${JSON.stringify(raw)}`, input: raw });
  return z.NEVER;
}

/** A whole number the function cannot start without (the construct writes it). */
export const requiredIntVar = (min = 1, max = Number.MAX_SAFE_INTEGER) =>
  z.pipe(
    requiredVar(),
    z.transform((raw, ctx) => wholeNumber(raw, min, max, ctx)),
  );

/**
 * A whole number the construct leaves unset, to tune one deployment or a test: `fallback` when unset or
 * empty.
 */
export const tuningIntVar = (fallback: number, min = 1, max = Number.MAX_SAFE_INTEGER) =>
  z.pipe(
    z.optional(z.string()),
    z.transform((raw, ctx) => (raw === undefined || raw === '' ? fallback : wholeNumber(raw, min, max, ctx))),
  );
