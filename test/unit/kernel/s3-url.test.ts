import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../shared/kernel/errors.ts';
import { parseS3Prefix, parseS3Url } from '../../../shared/kernel/s3-url.ts';

describe('parseS3Url', () => {
  it('splits an S3 URL into its bucket and its key as written', () => {
    expect(parseS3Url('s3://inv/reports/b/2026-12-01T00-00Z/manifest.json')).toEqual({
      bucket: 'inv',
      key: 'reports/b/2026-12-01T00-00Z/manifest.json',
    });
    expect(parseS3Url('s3://lake')).toEqual({ bucket: 'lake', key: '' });
    expect(parseS3Url('s3://lake/')).toEqual({ bucket: 'lake', key: '' });
    expect(parseS3Url('s3://lake/a b/c/')).toEqual({ bucket: 'lake', key: 'a b/c/' });
  });

  it('refuses what is not an S3 URL, naming it', () => {
    for (const url of ['https://lake.s3.amazonaws.com/k', 's3://', 's3:///k', 'lake/k', ''])
      expect(() => parseS3Url(url), url).toThrow(ConfigError);
    expect(() => parseS3Url('s3:/lake/k')).toThrow("'s3:/lake/k' is not an S3 URL");
  });
});

describe('parseS3Prefix', () => {
  it('reads the key as a prefix: trailing slashes do not make another location', () => {
    expect(parseS3Prefix('s3://lake/bronze/orders/')).toEqual({ bucket: 'lake', prefix: 'bronze/orders' });
    expect(parseS3Prefix('s3://lake/bronze/orders')).toEqual({ bucket: 'lake', prefix: 'bronze/orders' });
    expect(parseS3Prefix('s3://lake//')).toEqual({ bucket: 'lake', prefix: '' });
    expect(parseS3Prefix('s3://lake')).toEqual({ bucket: 'lake', prefix: '' });
  });
});
