import { recentDays } from '../../local/summary.ts';
import { output } from '../format.ts';
import type { CliTarget } from '../target.ts';

export async function quarantine(target: CliTarget, options: { days: number; json: boolean }): Promise<void> {
  const entries = await target.ledger.listQuarantine(recentDays(options.days));
  const rows = entries.map((e) => ({
    id: e.id,
    sentAt: e.sentAt,
    reason: e.reason,
    ...(options.json
      ? { body: e.body }
      : { body: e.body.length > 60 ? `${e.body.slice(0, 57)}...` : e.body }),
    // The stored body was cut to fit a DynamoDB item: say how long the message really was.
    ...(e.bodyTruncated ? { bodyTruncatedFrom: `${e.bodyBytes} bytes` } : {}),
  }));
  output(rows, options.json, `nothing quarantined in the last ${options.days} day(s)`);
}
