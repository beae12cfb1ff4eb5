import type { SQSRecord } from 'aws-lambda';
import { groupOf, receivesOf } from '../kernel/fifo-backoff.ts';
import type { Log } from '../kernel/log.ts';
import type { MessageVisibility, RetryLater } from '../kernel/message-visibility.ts';

export interface LeaseSettings {
  readonly visibility: MessageVisibility;
  /**
   * The visibility each beat gives a message on its first receive, counted from the beat
   * (DEFAULTS.sink.leaseSeconds); it doubles with each receive after, up to `maxSeconds`. Beats come every
   * third of it.
   */
  readonly seconds: number;
  /** The longest lease: the queue's visibility timeout, what a message had without one. @default 43,200 */
  readonly maxSeconds?: number;
  /**
   * Waits `ms`, or less once `signal` aborts. @default a `setTimeout`, cleared on abort (so an ended lease
   * leaves no timer behind to fire in the next invocation of a thawed execution environment)
   */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<unknown>;
  /** epoch ms @default Date.now */
  readonly now?: () => number;
}

/**
 * A visibility lease with a heartbeat on the messages one invocation holds, as SQS advises for work of
 * unknown length: "create a heartbeat for your consumer process: Specify the initial visibility timeout ...
 * and then—as long as your consumer still works on the message—keep extending the visibility timeout"
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/best-practices-processing-messages-timely-manner.html).
 *
 * At once, and then every third of the lease, it sets every held message's visibility to the lease from
 * now, so a live invocation's messages are never closer than two thirds of a lease to reappearing, while an
 * invocation that dies (out of memory, a runtime crash, a killed sandbox, a timeout) stops beating and its
 * messages, with their FIFO groups, come back within one lease instead of the queue's visibility timeout.
 * The queue keeps that long timeout for the time before the invocation starts (AWS asks for 6x the
 * function timeout so Lambda can retry a throttled invocation of the batch).
 *
 * A message received again was held by an invocation that died (or failed, and was given its backoff): its
 * lease doubles with each receive, up to the queue's timeout, so a version that crashes every run (out of
 * memory) backs off as a failure that passes does, instead of spending the queue's 10 receives, and its
 * way to the DLQ, in 10 minutes.
 *
 * Best effort: a beat that fails is logged and tried again at the next one (two can fail before a message
 * lapses); a message SQS refuses for a sender fault (its receipt handle expired, or another consumer
 * received it since) is no longer ours and is dropped. A lapsed lease lets a second invocation run the same
 * table at once, which the write path makes safe (docs/bronze.md, "A crashed sink"), so nothing here stops
 * the work.
 */
export class VisibilityLease {
  /** Receipt handle -> the message and its FIFO group (the table), while this invocation holds it. */
  private readonly held = new Map<string, { readonly message: RetryLater; readonly group: string }>();
  private readonly stopped = new AbortController();
  private readonly beating: Promise<void>;

  constructor(
    records: readonly SQSRecord[],
    private readonly settings: LeaseSettings & { readonly log: Log },
  ) {
    const cap = settings.maxSeconds ?? MAX_VISIBILITY_SECONDS;
    for (const r of records) {
      const seconds = Math.min(cap, settings.seconds * 2 ** Math.min(30, receivesOf(r) - 1));
      this.held.set(r.receiptHandle, {
        message: { receiptHandle: r.receiptHandle, queueArn: r.eventSourceARN, seconds },
        group: groupOf(r),
      });
    }
    this.beating = this.beat();
  }

  /**
   * Stops the heartbeat: the messages keep the visibility the last beat gave them (two thirds of a lease at
   * least), time for Lambda to delete the ones that succeeded and for the handler to give the failed ones
   * their backoff. A beat still in flight is cancelled and awaited, so no beat is sent after this returns
   * (one SQS had already taken may still apply: a failed table then comes back after a lease, not its
   * backoff).
   */
  async end(): Promise<void> {
    this.stopped.abort();
    await this.beating;
  }

  private async beat(): Promise<void> {
    const now = this.settings.now ?? Date.now;
    const sleep = this.settings.sleep ?? sleepUnlessAborted;
    const periodMs = (this.settings.seconds * 1000) / 3;
    while (!this.stopped.signal.aborted && this.held.size > 0) {
      const started = now();
      await this.extend();
      if (this.stopped.signal.aborted || this.held.size === 0) return;
      await sleep(Math.max(0, started + periodMs - now()), this.stopped.signal);
    }
  }

  private async extend(): Promise<void> {
    const { log, visibility } = this.settings;
    const held = [...this.held.values()];
    try {
      const refused = await visibility.changeVisibility(
        held.map((h) => h.message),
        this.stopped.signal,
      );
      for (const { receiptHandle, code, senderFault, message } of refused) {
        const entry = this.held.get(receiptHandle);
        if (!entry) continue;
        const about = { table: entry.group, code, message };
        if (!senderFault) {
          log.warn('visibility lease not extended for a message; tried again at the next beat', about);
          continue;
        }
        this.held.delete(receiptHandle);
        log.warn('visibility lease lost: another sink may run the table at the same time, safely', about);
      }
    } catch (error) {
      if (this.stopped.signal.aborted) return;
      log.warn('could not extend the visibility lease; tried again at the next beat', {
        tables: [...new Set(held.map((h) => h.group))],
        error: String(error),
      });
    }
  }
}

/** SQS's ceiling for a visibility timeout: 12 hours. */
const MAX_VISIBILITY_SECONDS = 43_200;

function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
