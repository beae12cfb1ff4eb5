// What a person reads: sizes in KiB/MiB/GiB, recent times relative, tables cut to the terminal's width.
// `--json` bypasses all of it and prints the exact values and the full text.

const UNITS = ['KiB', 'MiB', 'GiB', 'TiB'] as const;

/** 1536 -> "1.5 KiB"; below 1 KiB, exact bytes ("512 B"). */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || Math.abs(bytes) < 1024) return `${bytes} B`;
  let value = bytes;
  let unit = 'B';
  for (const next of UNITS) {
    if (Math.abs(value) < 1024) break;
    value /= 1024;
    unit = next;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${unit}`;
}

const pad = (n: number) => String(n).padStart(2, '0');

/**
 * Within a day: relative ("just now", "42 s ago", "2 min ago", "3 h ago"); older, or in the future (clock
 * skew): local time, "2026-11-29 13:05". Null or unparseable stays "-"/as is.
 */
export function formatTime(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '-';
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  const ago = (now - at) / 1000;
  if (ago >= 0 && ago < 5) return 'just now';
  if (ago >= 0 && ago < 60) return `${Math.floor(ago)} s ago`;
  if (ago >= 0 && ago < 3600) return `${Math.floor(ago / 60)} min ago`;
  if (ago >= 0 && ago < 86_400) return `${Math.floor(ago / 3600)} h ago`;
  const d = new Date(at);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/**
 * Columns of the terminal stdout is on; COLUMNS when piped (a shell sets it for scripts that ask); else
 * unlimited, so a table sent to a file or `less` keeps every character.
 */
export function terminalWidth(stream: { isTTY?: boolean; columns?: number } = process.stdout): number {
  if (stream.isTTY && stream.columns) return stream.columns;
  const fromEnv = Number.parseInt(process.env.COLUMNS ?? '', 10);
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : Number.POSITIVE_INFINITY;
}

/** Cuts text to `width` characters, the last one an ellipsis. */
export function truncate(text: string, width: number): string {
  if (text.length <= width) return text;
  return width <= 1 ? '…'.slice(0, width) : `${text.slice(0, width - 1)}…`;
}

const GAP = 2;
/** A column is never cut below this: a few characters of a key or reason still say which one it is. */
const MIN_WIDTH = 8;

/**
 * Fits column widths into `width`: the widest column gives way first, one character at a time, down to
 * MIN_WIDTH (a table that still does not fit wraps, as a terminal would).
 */
export function fitWidths(natural: readonly number[], width: number): number[] {
  const widths = [...natural];
  const total = () => widths.reduce((a, b) => a + b, 0) + GAP * Math.max(0, widths.length - 1);
  while (total() > width) {
    let widest = -1;
    for (let i = 0; i < widths.length; i++)
      if ((widths[i] ?? 0) > MIN_WIDTH && (widest < 0 || (widths[i] ?? 0) > (widths[widest] ?? 0)))
        widest = i;
    if (widest < 0) break;
    widths[widest] = (widths[widest] ?? 0) - 1;
  }
  return widths;
}

const cell = (v: unknown) =>
  v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v);

/** Renders rows as an aligned table no wider than `width` (wide cells end in "…"). */
export function renderTable(rows: ReadonlyArray<Record<string, unknown>>, width: number): string[] {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const natural = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const widths = fitWidths(natural, width);
  const line = (values: string[]) =>
    values
      .map((v, i) => truncate(v, widths[i] ?? 0).padEnd(widths[i] ?? 0))
      .join(' '.repeat(GAP))
      .trimEnd();
  return [
    line(columns),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map((row) => line(columns.map((c) => cell(row[c])))),
  ];
}

/**
 * Prints rows: `--json` gets `rows` exactly as given; a person gets `human(row)` (readable sizes and times)
 * as a table cut to the terminal width.
 */
export function output<Row extends Record<string, unknown>>(
  rows: readonly Row[],
  options: { json: boolean; empty: string; human?: (row: Row) => Record<string, unknown> },
): void {
  if (options.json) {
    console.log(JSON.stringify(rows, null, 2));
    return;
  }
  if (rows.length === 0) {
    console.log(options.empty);
    return;
  }
  const shown = options.human ? rows.map(options.human) : rows;
  for (const line of renderTable(shown, terminalWidth())) console.log(line);
}
