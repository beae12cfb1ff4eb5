import * as z from '../kernel/zod.ts';

/** Tokens a key time pattern may use, coarsest first; UTC. */
const TOKENS = ['YYYY', 'MM', 'DD', 'HH'] as const;
type Token = (typeof TOKENS)[number];
const UNIT_MS: Record<Token, number> = { YYYY: 0, MM: 0, DD: 86_400_000, HH: 3_600_000 };

/** At most this many prefixes per reconcile run: a wider window lists the whole table prefix instead. */
export const MAX_WINDOW_PREFIXES = 1_000;

function tokensOf(pattern: string): Token[] {
  return TOKENS.filter((t) => pattern.includes(t));
}

/**
 * Where a table's keys carry the time they were written, e.g. `orders/dt=YYYY-MM-DD/`: reconcile then
 * lists only the prefixes its window can touch, not the whole table (O(window), not O(bucket)).
 */
export const keyTimeSchema = z
  .strictObject({
    /** The key prefix with UTC time tokens, e.g. `orders/dt=YYYY-MM-DD/` or `logs/YYYY/MM/DD/HH/`. */
    pattern: z.string().check(z.minLength(1)),
    /**
     * How far a key's time may lie from its LastModified (late or early writers): the window is widened by
     * this much on both sides before picking prefixes. @default 3600
     */
    skewSeconds: z._default(z.int().check(z.nonnegative()), 3_600),
  })
  .check(
    z.superRefine((value, ctx) => {
      const used = tokensOf(value.pattern);
      const problem = (message: string) => ctx.addIssue({ code: 'custom', path: ['pattern'], message });
      // Every coarser token is needed to name one prefix per unit (DD without MM would repeat each month).
      if (used.length === 0 || used.some((t, i) => t !== TOKENS[i]))
        problem('needs YYYY, then optionally MM, DD, HH, each coarser one present');
      const positions = used.map((t) => value.pattern.indexOf(t));
      if (positions.some((p, i) => i > 0 && p < (positions[i - 1] ?? 0)))
        problem('tokens must appear coarsest first (YYYY before MM before DD before HH)');
      if (used.some((t) => value.pattern.indexOf(t) !== value.pattern.lastIndexOf(t)))
        problem('each token at most once');
    }),
  );
export type KeyTime = z.infer<typeof keyTimeSchema>;
export type KeyTimeInput = z.input<typeof keyTimeSchema>;

const pad = (n: number, width: number) => String(n).padStart(width, '0');

function format(pattern: string, time: Date): string {
  return pattern
    .replace('YYYY', pad(time.getUTCFullYear(), 4))
    .replace('MM', pad(time.getUTCMonth() + 1, 2))
    .replace('DD', pad(time.getUTCDate(), 2))
    .replace('HH', pad(time.getUTCHours(), 2));
}

/** The start of the next unit (day, hour, month, year) after `time`'s. */
function nextUnit(token: Token, time: Date): Date {
  if (token === 'DD' || token === 'HH') {
    const unit = UNIT_MS[token];
    return new Date(Math.floor(time.getTime() / unit) * unit + unit);
  }
  const months = token === 'MM' ? 1 : 12;
  const base = token === 'MM' ? time.getUTCMonth() : 0;
  return new Date(Date.UTC(time.getUTCFullYear(), base + months, 1));
}

/**
 * The prefixes keys written in [after, before) can have, widened by the skew: one per day (or hour, month,
 * year: the pattern's finest token), in key order. Undefined when more than MAX_WINDOW_PREFIXES.
 */
export function prefixesInWindow(keyTime: KeyTime, after: string, before: string): string[] | undefined {
  const finest = tokensOf(keyTime.pattern).at(-1) ?? 'YYYY';
  const skew = keyTime.skewSeconds * 1000;
  const end = Date.parse(before) + skew;
  const prefixes: string[] = [];
  for (let t = new Date(Date.parse(after) - skew); t.getTime() < end; t = nextUnit(finest, t)) {
    prefixes.push(format(keyTime.pattern, t));
    if (prefixes.length > MAX_WINDOW_PREFIXES) return undefined;
  }
  return [...new Set(prefixes)].sort();
}
