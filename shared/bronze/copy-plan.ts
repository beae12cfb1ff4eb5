import { DefiniteFailureError } from '../kernel/errors.ts';

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;

/**
 * S3's multipart limits (https://docs.aws.amazon.com/AmazonS3/latest/userguide/qfacts.html): parts of
 * 5 MiB to 5 GiB, the last one may be smaller, part numbers 1 to 10,000.
 */
export const MIN_PART_BYTES = 5 * MiB;
export const MAX_PART_BYTES = 5 * GiB;
export const MAX_PARTS = 10_000;
/** The biggest object a multipart copy can produce: 10,000 parts of 5 GiB (S3's own maximum object size). */
export const MAX_MULTIPART_BYTES = MAX_PARTS * MAX_PART_BYTES;
/**
 * Our default part: a 6 GB file is 12 requests, and 10,000 of them still cover 5 TiB, so the
 * size-driven growth below only starts past that.
 */
export const DEFAULT_PART_BYTES = 512 * MiB;

export interface CopyPart {
  readonly partNumber: number;
  /** Zero-based, inclusive: `CopySourceRange: bytes=first-last`. */
  readonly first: number;
  readonly last: number;
}

/**
 * The parts of a server-side copy of `size` bytes: `partBytes` each (grown when 10,000 of them would not
 * cover the object), the last one holding the rest.
 *
 * @example planCopyParts(12 * MiB, 5 * MiB) // 1: 0-5242879, 2: 5242880-10485759, 3: 10485760-12582911
 */
export function planCopyParts(size: number, partBytes = DEFAULT_PART_BYTES): CopyPart[] {
  if (!Number.isSafeInteger(size) || size <= 0)
    throw new DefiniteFailureError(`cannot plan a multipart copy of ${size} bytes`);
  if (!Number.isSafeInteger(partBytes) || partBytes < MIN_PART_BYTES || partBytes > MAX_PART_BYTES)
    throw new DefiniteFailureError(
      `a copy part must be ${MIN_PART_BYTES} to ${MAX_PART_BYTES} bytes, not ${partBytes}`,
    );
  if (size > MAX_MULTIPART_BYTES)
    throw new DefiniteFailureError(
      `${size} bytes is more than ${MAX_PARTS} parts of ${MAX_PART_BYTES} bytes (S3's largest object)`,
    );
  const each = Math.max(partBytes, Math.ceil(size / MAX_PARTS));
  const parts: CopyPart[] = [];
  for (let first = 0; first < size; first += each)
    parts.push({ partNumber: parts.length + 1, first, last: Math.min(first + each, size) - 1 });
  return parts;
}
