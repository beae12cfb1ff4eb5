import { recentDays } from '../../local/summary.ts';
import { formatBytes, formatTime, output } from '../format.ts';
import type { CliTarget } from '../target.ts';

export async function quarantine(target: CliTarget, options: { days: number; json: boolean }): Promise<void> {
  const entries = await target.ledger.listQuarantine(recentDays(options.days));
  const rows = entries.map((e) => ({
    id: e.id,
    sentAt: e.sentAt,
    reason: e.reason,
    body: e.body,
    // The stored body was cut to fit a DynamoDB item: say how long the message really was.
    ...(e.bodyTruncated ? { bodyTruncated: true, bodyBytes: e.bodyBytes } : {}),
  }));
  output(rows, {
    json: options.json,
    empty: `nothing quarantined in the last ${options.days} day(s)`,
    // Reasons and bodies are cut to the terminal width in the table; --json has them whole.
    human: ({ bodyTruncated, bodyBytes, ...r }) => ({
      ...r,
      sentAt: formatTime(r.sentAt),
      body: r.body.replace(/\s+/g, ' '),
      ...(bodyTruncated ? { bodyTruncatedFrom: formatBytes(bodyBytes ?? 0) } : {}),
    }),
  });
}
