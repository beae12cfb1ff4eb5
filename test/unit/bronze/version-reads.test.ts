import { describe, expect, it } from 'vitest';
import { VersionCommits } from '../../../shared/bronze/version-reads.ts';

/** A commit of the sink's for manifest version `v` (files `[from, to)` of `of` when a part). */
const ours = (v: number, part?: { from: number; to: number; of: number }, missing: string[] = []) =>
  `${JSON.stringify({
    commitInfo: {
      operation: 'WRITE',
      inlet: { manifestVersion: v, ...(part ? { sourceFiles: part } : {}), missingSources: missing },
    },
  })}\n`;
const other = `${JSON.stringify({ commitInfo: { operation: 'OPTIMIZE' } })}\n`;

/** A log as a list of commit texts, counting the GETs a lookup takes. */
function log(commits: (string | undefined)[]) {
  let gets = 0;
  return {
    delta: {
      getCommit: async (d: number) => {
        gets += 1;
        return commits[d];
      },
    },
    gets: () => gets,
  };
}

describe("finding a manifest version's commits in the log (cleanSource)", () => {
  it("joins the parts of a version across another writer's commits, with their missing files", async () => {
    const l = log([
      ours(1),
      ours(2, { from: 0, to: 1, of: 3 }, ['s3://l/a']),
      other,
      ours(2, { from: 1, to: 3, of: 3 }, ['s3://l/c']),
      ours(3),
    ]);
    const reads = await new VersionCommits(l.delta, 4).readsOf(2);
    expect(reads && [...reads.missing]).toEqual(['s3://l/a', 's3://l/c']);
  });

  it('finds a version far past Delta version v-1 by bisection, in a few GETs', async () => {
    // 1,000 versions, each after 3 commits of another writer: version v is at Delta version 4v-1.
    const commits: string[] = [];
    for (let v = 1; v <= 1000; v++) commits.push(other, other, other, ours(v));
    const l = log(commits);
    const finder = new VersionCommits(l.delta, commits.length - 1);
    expect(await finder.readsOf(700)).toBeDefined();
    expect(l.gets()).toBeLessThan(60);
    // The next version of the same run starts where this one ended.
    const before = l.gets();
    expect(await finder.readsOf(701)).toBeDefined();
    expect(l.gets() - before).toBeLessThanOrEqual(6);
  });

  it('finds nothing when a part is missing, or a commit was removed from the log', async () => {
    const gap = log([ours(1), ours(2, { from: 0, to: 1, of: 3 }), ours(3)]);
    expect(await new VersionCommits(gap.delta, 2).readsOf(2)).toBeUndefined();
    const cleaned = log([undefined, ours(2)]);
    expect(await new VersionCommits(cleaned.delta, 1).readsOf(1)).toBeUndefined();
    const notYet = log([ours(1)]);
    expect(await new VersionCommits(notYet.delta, 0).readsOf(2)).toBeUndefined();
  });
});
