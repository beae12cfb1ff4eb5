import type { MetaDataAction } from './delta-actions.ts';

const HOUR_MS = 3_600_000;

const UNITS: Record<string, number> = {
  millisecond: 1,
  second: 1_000,
  minute: 60_000,
  hour: HOUR_MS,
  day: 24 * HOUR_MS,
  week: 7 * 24 * HOUR_MS,
};

/** `delta.deletedFileRetentionDuration` as Spark writes it (`interval 7 days`), in ms; undefined if absent or unreadable. */
export function tableRetentionMs(metaData: MetaDataAction | undefined): number | undefined {
  const text = metaData?.configuration?.['delta.deletedFileRetentionDuration'];
  const m = text
    ? /^\s*(?:interval\s+)?(\d+)\s*(millisecond|second|minute|hour|day|week)s?\s*$/i.exec(text)
    : null;
  if (!m) return undefined;
  return Number(m[1]) * (UNITS[(m[2] as string).toLowerCase()] as number);
}

/**
 * How long a removed file stays wanted: the configured retention, or the table's own
 * `delta.deletedFileRetentionDuration` when longer. Vacuum deletes by it and checkpoints drop tombstones by it,
 * so a checkpoint never forgets when a file left the table while vacuum still counts from then.
 */
export const effectiveRetentionMs = (configuredMs: number, metaData: MetaDataAction | undefined): number =>
  Math.max(configuredMs, tableRetentionMs(metaData) ?? 0);
