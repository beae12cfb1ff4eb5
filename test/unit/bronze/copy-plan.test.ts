import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PART_BYTES,
  MAX_MULTIPART_BYTES,
  MAX_PART_BYTES,
  MAX_PARTS,
  MIN_PART_BYTES,
  planCopyParts,
} from '../../../shared/bronze/copy-plan.ts';

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;

/** The rules S3 puts on a completed multipart upload: what a plan breaks of them (plain loops: 10,000 parts). */
function violations(size: number, parts: ReturnType<typeof planCopyParts>): string[] {
  const found: string[] = [];
  if (parts.length === 0 || parts.length > MAX_PARTS) found.push(`${parts.length} parts`);
  let next = 0;
  parts.forEach((part, i) => {
    const bytes = part.last - part.first + 1;
    if (part.partNumber !== i + 1) found.push(`part ${i} numbered ${part.partNumber}`);
    if (part.first !== next) found.push(`part ${part.partNumber} starts at ${part.first}, not ${next}`);
    if (bytes > MAX_PART_BYTES) found.push(`part ${part.partNumber} has ${bytes} bytes`);
    if (bytes < (i < parts.length - 1 ? MIN_PART_BYTES : 1))
      found.push(`part ${part.partNumber} has only ${bytes} bytes`);
    next = part.last + 1;
  });
  if (next !== size) found.push(`covers ${next} of ${size} bytes`);
  return found;
}

const expectValid = (size: number, parts: ReturnType<typeof planCopyParts>) =>
  expect(violations(size, parts), `size ${size}`).toEqual([]);

describe('planCopyParts', () => {
  it('cuts an object into parts of the given size, the last holding the rest', () => {
    expect(planCopyParts(12 * MiB, 5 * MiB)).toEqual([
      { partNumber: 1, first: 0, last: 5 * MiB - 1 },
      { partNumber: 2, first: 5 * MiB, last: 10 * MiB - 1 },
      { partNumber: 3, first: 10 * MiB, last: 12 * MiB - 1 },
    ]);
    expect(planCopyParts(10 * MiB, 5 * MiB).map((p) => p.last - p.first + 1)).toEqual([5 * MiB, 5 * MiB]);
    expect(planCopyParts(10 * MiB + 1, 5 * MiB).at(-1)).toEqual({
      partNumber: 3,
      first: 10 * MiB,
      last: 10 * MiB,
    });
  });

  it('uses 512 MiB parts by default: a file just over 5 GB is 11 requests', () => {
    const size = 5 * GiB + 1;
    const parts = planCopyParts(size);
    expect(DEFAULT_PART_BYTES).toBe(512 * MiB);
    expect(parts).toHaveLength(11);
    expectValid(size, parts);
  });

  it('grows the part size when 10,000 parts would not cover the object, up to S3s largest object', () => {
    for (const size of [
      10_000 * DEFAULT_PART_BYTES,
      10_000 * DEFAULT_PART_BYTES + 1,
      5 * 1024 * GiB,
      MAX_MULTIPART_BYTES - 1,
      MAX_MULTIPART_BYTES,
    ]) {
      const parts = planCopyParts(size);
      expectValid(size, parts);
    }
    expect(planCopyParts(10_000 * DEFAULT_PART_BYTES)).toHaveLength(10_000);
    expect(planCopyParts(10_000 * DEFAULT_PART_BYTES + 1)).toHaveLength(10_000);
    expect(planCopyParts(MAX_MULTIPART_BYTES).every((p) => p.last - p.first + 1 === MAX_PART_BYTES)).toBe(
      true,
    );
  });

  it('finds a plan that breaks a limit (the check above can fail)', () => {
    const good = planCopyParts(12 * MiB, 5 * MiB);
    expect(violations(12 * MiB, good.slice(0, 2))).toEqual(['covers 10485760 of 12582912 bytes']);
    expect(
      violations(12 * MiB, [
        good[0],
        { partNumber: 2, first: 5 * MiB, last: 12 * MiB - 1 - 3 * MiB },
        { partNumber: 3, first: 9 * MiB, last: 12 * MiB - 1 },
      ] as typeof good),
    ).toEqual(['part 2 has only 4194304 bytes']);
  });

  it('holds the limits for many sizes and part sizes', () => {
    for (let i = 0; i < 200; i++) {
      // Deterministic spread over 5 MiB .. 48.8 TiB and part sizes 5 MiB .. 5 GiB.
      const size = Math.floor(5 * MiB + ((i * 7919) % 1000) ** 3 * 50_000);
      const partBytes = MIN_PART_BYTES + ((i * 104_729) % (MAX_PART_BYTES - MIN_PART_BYTES));
      if (size > MAX_MULTIPART_BYTES) continue;
      expectValid(size, planCopyParts(size, partBytes));
    }
  });

  it('refuses what S3 cannot do: parts outside 5 MiB - 5 GiB, an object over 10,000 x 5 GiB, no bytes', () => {
    expect(() => planCopyParts(12 * MiB, 5 * MiB - 1)).toThrow('a copy part must be');
    expect(() => planCopyParts(12 * GiB, 5 * GiB + 1)).toThrow('a copy part must be');
    expect(() => planCopyParts(MAX_MULTIPART_BYTES + 1)).toThrow('more than 10000 parts');
    expect(() => planCopyParts(0)).toThrow('cannot plan');
  });
});
