import { describe, expect, it } from 'vitest';
import {
  addPathOf,
  dataFileKeyOf,
  escapePathName,
  HIVE_DEFAULT_PARTITION,
  ingestDate,
  partitionDirectory,
  partitionValueText,
} from '../../../shared/bronze/partition-paths.ts';

describe('partition values and Hive-style paths', () => {
  it("escapes a path segment as Spark's ExternalCatalogUtils.escapePathName does", () => {
    expect(escapePathName('a b')).toBe('a b');
    expect(escapePathName('x/y=z%w')).toBe('x%2Fy%3Dz%25w');
    expect(escapePathName('"#\'*:?\\{[]^')).toBe('%22%23%27%2A%3A%3F%5C%7B%5B%5D%5E');
    expect(escapePathName('tab\there\n\u007f')).toBe('tab%09here%0A%7F');
    // Non-ASCII, `}`, `,`, `<`, `|` and NUL are left as they are (Linux rules).
    expect(escapePathName('ünï ☃}<|,')).toBe('ünï ☃}<|,');
  });

  it('serializes values as PROTOCOL.md "Partition Value Serialization" gives, null for a null', () => {
    expect(partitionValueText('a/b', 'string')).toBe('a/b');
    expect(partitionValueText(9007199254740993n, 'long')).toBe('9007199254740993');
    expect(partitionValueText(-7, 'integer')).toBe('-7');
    expect(partitionValueText(true, 'boolean')).toBe('true');
    expect(partitionValueText(19723, 'date')).toBe('2024-01-01');
    expect(partitionValueText(null, 'string')).toBeNull();
    // An empty string reads as null (PROTOCOL.md): the fitter rescues it before it gets here.
    expect(partitionValueText('', 'string')).toBeNull();
  });

  it('is the UTC date of the manifest commit time for the ingestion date', () => {
    expect(ingestDate('2026-12-01T23:59:59.999Z')).toBe(20788);
    expect(ingestDate('2026-12-02T00:00:00.000Z')).toBe(20789);
  });

  it('names a directory per column in order, the null value as __HIVE_DEFAULT_PARTITION__', () => {
    expect(
      partitionDirectory([
        ['region', 'x/y z'],
        ['day', null],
      ]),
    ).toBe(`region=x%2Fy z/day=${HIVE_DEFAULT_PARTITION}/`);
    expect(partitionDirectory([])).toBe('');
  });

  it("writes add.path as the key's URI (RFC 2396, as Hadoop's Path.toUri), decoded back to the key", () => {
    const keys = [
      'part-00000000000000000001-00000-a.snappy.parquet',
      'region=a b/part-1.parquet',
      'region=x%2Fy%3Dz%25w/part-1.parquet',
      'region=ünï ☃}<|,/part-1.parquet',
      'region=nbsp\u00a0/part-1.parquet',
    ];
    expect(keys.map(addPathOf)).toEqual([
      'part-00000000000000000001-00000-a.snappy.parquet',
      'region=a%20b/part-1.parquet',
      'region=x%252Fy%253Dz%2525w/part-1.parquet',
      'region=ünï%20☃%7D%3C%7C,/part-1.parquet',
      'region=nbsp%C2%A0/part-1.parquet',
    ]);
    for (const key of keys) expect(dataFileKeyOf(addPathOf(key))).toBe(key);
  });
});
