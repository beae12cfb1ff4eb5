import { describe, expect, it } from 'vitest';
import { fitWidths, formatBytes, formatTime, renderTable, truncate } from '../../../cli/format.ts';
import { nodeSupportLine } from '../../../cli/node-support.ts';

describe('figures a person reads', () => {
  it('shows sizes in KiB, MiB and GiB, and small sizes in exact bytes', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1023)).toBe('1023 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(200 * 1024)).toBe('200 KiB');
    expect(formatBytes(5 * 1024 ** 2 + 1)).toBe('5.0 MiB');
    expect(formatBytes(3.25 * 1024 ** 3)).toBe('3.3 GiB');
  });

  it('shows times within a day as relative, older ones as local date and time', () => {
    const now = Date.parse('2026-11-30T12:00:00.000Z');
    expect(formatTime('2026-11-30T11:59:58.000Z', now)).toBe('just now');
    expect(formatTime('2026-11-30T11:59:18.000Z', now)).toBe('42 s ago');
    expect(formatTime('2026-11-30T11:58:00.000Z', now)).toBe('2 min ago');
    expect(formatTime('2026-11-30T09:00:00.000Z', now)).toBe('3 h ago');
    const old = new Date(2026, 10, 20, 8, 5); // local time
    expect(formatTime(old.toISOString(), now)).toBe('2026-11-20 08:05');
    expect(formatTime(null, now)).toBe('-');
  });
});

describe('tables at the terminal width', () => {
  const rows = [
    {
      id: 'q-1',
      reason: 'message body is not JSON: Unexpected token < in JSON at position 0',
      body: '<html>'.repeat(40),
    },
    { id: 'q-2', reason: 'unknown table', body: '{}' },
  ];

  it('cuts the widest columns so every line fits, ending cut cells with an ellipsis', () => {
    const lines = renderTable(rows, 60);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(60);
    expect(lines[2]).toMatch(/…/);
    expect(lines[2]?.startsWith('q-1  ')).toBe(true);
  });

  it('keeps every character when the width allows it', () => {
    const lines = renderTable(rows, Number.POSITIVE_INFINITY);
    expect(lines[2]).toContain(rows[0]?.body);
    expect(lines.join('\n')).not.toMatch(/…/);
  });

  it('never cuts a column below a readable minimum', () => {
    expect(fitWidths([30, 30, 30], 10)).toEqual([8, 8, 8]);
    expect(truncate('abcdef', 4)).toBe('abc…');
  });
});

describe('the Node version line', () => {
  it('is one line of ours below Node 22, nothing from 22 on', () => {
    const line = nodeSupportLine('20.20.2');
    expect(line).toMatch(/^Node 20 is end-of-life; .*Node 22\+/);
    expect(line).not.toContain('\n');
    expect(nodeSupportLine('22.1.0')).toBeUndefined();
    expect(nodeSupportLine('24.0.0')).toBeUndefined();
  });
});
