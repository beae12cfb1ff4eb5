import { ConfigError } from './errors.ts';

/** What an `s3://` URL names: a bucket and a key (or key prefix) in it. */
export interface S3Url {
  readonly bucket: string;
  /** Everything after the bucket's slash, as written: '' for `s3://bucket` and `s3://bucket/`. */
  readonly key: string;
}

const S3_URL = /^s3:\/\/([^/]+)(?:\/(.*))?$/s;

/**
 * `s3://bucket/key` into its bucket and key, the one parser of S3 URLs (configuration, backfill requests,
 * the CLI). Whether the bucket name is a valid one is the caller's schema's to say; a string that is not an
 * S3 URL at all is a `ConfigError` naming it.
 */
export function parseS3Url(url: string): S3Url {
  const match = S3_URL.exec(url);
  if (!match?.[1]) throw new ConfigError([`'${url}' is not an S3 URL (s3://bucket/key)`]);
  return { bucket: match[1], key: match[2] ?? '' };
}

/** An S3 URL read as a location: its key a prefix without trailing slashes (`s3://lake/bronze/` = `s3://lake/bronze`). */
export function parseS3Prefix(url: string): { readonly bucket: string; readonly prefix: string } {
  const { bucket, key } = parseS3Url(url);
  return { bucket, prefix: key.replace(/\/+$/, '') };
}
