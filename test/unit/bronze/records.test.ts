import { describe, expect, it } from 'vitest';
import { MAX_RECORD_CHARS, readRecords, type SourceRecord } from '../../../shared/bronze/records.ts';

async function read(format: 'json' | 'csv', text: string, chunk = 5): Promise<SourceRecord[]> {
  const bytes = new TextEncoder().encode(text);
  const chunks = (async function* () {
    for (let i = 0; i < bytes.length; i += chunk) yield bytes.slice(i, i + chunk);
  })();
  const out: SourceRecord[] = [];
  for await (const r of readRecords(format, chunks)) out.push(r);
  return out;
}

describe('bronze record readers', () => {
  it('reads JSON Lines across chunk boundaries, multibyte characters included, skipping blank lines', async () => {
    const records = await read('json', '{"a":1,"s":"żółw"}\r\n\n{"a":2}\n', 3);
    expect(records).toEqual([
      { kind: 'row', values: { a: 1, s: 'żółw' } },
      { kind: 'row', values: { a: 2 } },
    ]);
  });

  it('rescues a line that is not JSON, or not an object, and keeps reading', async () => {
    const records = await read('json', '{"a":1}\n{"a":\n[1,2]\n{"a":3}');
    expect(records.map((r) => r.kind)).toEqual(['row', 'corrupt', 'corrupt', 'row']);
    expect(records[1]).toMatchObject({ raw: '{"a":', reason: expect.stringContaining('not JSON') });
  });

  it('rescues a line that is a number, however it is parsed', async () => {
    const records = await read('json', '1.0\n1e400\n12\n{"a":1}\n');
    expect(records.map((r) => (r.kind === 'corrupt' ? r.reason : r.kind))).toEqual([
      'a JSON record must be an object',
      'a JSON record must be an object',
      'a JSON record must be an object',
      'row',
    ]);
    expect(await read('json', '[1.0, {"a":1}]')).toEqual([
      { kind: 'corrupt', raw: '1.0', reason: 'a JSON record must be an object' },
      { kind: 'row', values: { a: 1 } },
    ]);
  });

  it('reads a file that is one JSON array of records', async () => {
    const records = await read('json', '[\n {"a":1},\n {"a":2}, 3\n]\n');
    expect(records).toEqual([
      { kind: 'row', values: { a: 1 } },
      { kind: 'row', values: { a: 2 } },
      { kind: 'corrupt', raw: '3', reason: 'a JSON record must be an object' },
    ]);
  });

  it('cuts a line longer than the cap into one rescued record and reads the next line', async () => {
    const long = `{"a":"${'x'.repeat(MAX_RECORD_CHARS + 10)}"}`;
    const records = await read('json', `${long}\n{"a":2}\n`, 1024 * 1024);
    expect(records.map((r) => r.kind)).toEqual(['corrupt', 'row']);
    expect((records[0] as { raw: string }).raw.length).toBeLessThan(100_000);
  });

  it('reads CSV with a header, quoted commas, doubled quotes and newlines in quotes', async () => {
    const records = await read('csv', 'id,note\r\n1,"a, ""b"""\n2,"line1\nline2"\n');
    expect(records).toEqual([
      { kind: 'row', values: { id: '1', note: 'a, "b"' } },
      { kind: 'row', values: { id: '2', note: 'line1\nline2' } },
    ]);
  });

  it('rescues a CSV row with the wrong number of fields and an unterminated quote at the end', async () => {
    const records = await read('csv', 'id,note\n1,a,extra\n2,b\n3,"open');
    expect(records.map((r) => r.kind)).toEqual(['corrupt', 'row', 'corrupt']);
    expect(records[0]).toMatchObject({ raw: '1,a,extra', reason: '3 fields where the header has 2' });
  });

  it('reads the same CSV records wherever the body is cut into chunks: a doubled quote, a CRLF or a multibyte character across a cut', async () => {
    const text = '\uFEFFid,note\r\n1,"a ""b"" c"\r\n2,"żółw\r\nline2"\r\n3,""\r\n';
    const expected = [
      { kind: 'row', values: { id: '1', note: 'a "b" c' } },
      { kind: 'row', values: { id: '2', note: 'żółw\r\nline2' } },
      { kind: 'row', values: { id: '3', note: '' } },
    ];
    const bytes = new TextEncoder().encode(text).length;
    for (let chunk = 1; chunk <= bytes; chunk++)
      expect(await read('csv', text, chunk), `chunks of ${chunk} bytes`).toEqual(expected);
  });

  it('keeps a carriage return inside quotes at the end of a field: only the line ending is dropped', async () => {
    expect(await read('csv', 'id,note\n1,"a\r"\n2,"b\r"\r\n', 64)).toEqual([
      { kind: 'row', values: { id: '1', note: 'a\r' } },
      { kind: 'row', values: { id: '2', note: 'b\r' } },
    ]);
  });

  it('rescues a CSV row as it was written: doubled quotes stay doubled in the rescued text', async () => {
    const records = await read('csv', 'id,note\n1,"a ""b""",extra\n', 64);
    expect(records).toEqual([
      { kind: 'corrupt', raw: '1,"a ""b""",extra', reason: '3 fields where the header has 2' },
    ]);
  });

  it('keeps both values of a repeated CSV header name', async () => {
    const records = await read('csv', 'id,id,v\n1,2,3\n');
    expect(records).toEqual([{ kind: 'row', values: { id: '1', id_2: '2', v: '3' } }]);
  });
});
