import pLimit from 'p-limit';

/**
 * `load` of each item, at most `concurrency` at once, results yielded in the items' order, loading at most
 * `2 x concurrency` ahead of the consumer. S3 answers a small GET in tens of milliseconds
 * (docs/aws-behaviour.md, "Small-object GET latency ..."): reading a version's files one after the
 * other spends the sink's time waiting, so they are read in parallel while earlier ones are parsed.
 */
export async function* readAhead<T, R>(
  items: readonly T[],
  load: (item: T) => Promise<R>,
  concurrency: number,
): AsyncGenerator<R> {
  const limit = pLimit(concurrency);
  const window = 2 * concurrency;
  const pending: Promise<R>[] = [];
  let next = 0;
  const fill = () => {
    while (next < items.length && pending.length < window) {
      const item = items[next] as T;
      next += 1;
      const loading = limit(() => load(item));
      // Handled now, awaited in order later: a failure while an earlier item is consumed is not "unhandled".
      loading.catch(() => undefined);
      pending.push(loading);
    }
  };
  try {
    fill();
    for (let loading = pending.shift(); loading; loading = pending.shift()) {
      const result = await loading;
      fill();
      yield result;
    }
  } finally {
    // The consumer stopped early (an error, or out of time): nothing more starts.
    limit.clearQueue();
  }
}
