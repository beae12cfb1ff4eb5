/**
 * Waits until `condition` holds, checking every `everyMs`; after `timeoutMs` it fails saying what it
 * waited for and what it last saw. Tests wait on conditions like this, never on a fixed sleep: a loaded
 * machine then only makes them slower, not red.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T> | T,
  condition: (value: T) => boolean,
  { timeoutMs = 60_000, everyMs = 100 }: { timeoutMs?: number; everyMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (condition(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`waited ${timeoutMs} ms for ${what}; last saw ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
