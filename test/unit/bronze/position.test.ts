// Where a bronze table stands by manifest version, as the local runner's "caught up" check (`npm start --
// --available-now` stops on it) and `inlet table` read it, on tables whose Delta versions are not their
// manifest versions - 1: a version written in parts, another writer's commits.
import { describe, expect, it } from 'vitest';
import { sinksCaughtUp } from '../../../local/sinks-caught-up.ts';
import type { SourceObjects } from '../../../shared/bronze/ports.ts';
import { readBronzeTable } from '../../../shared/bronze/table-state.ts';
import { DEFAULT_PART_LIMITS } from '../../../shared/bronze/write-version.ts';
import { after, sinkSetup } from './sink-fixture.ts';

describe('where a bronze table stands, by manifest version', () => {
  it('is false in the middle of a version written in parts, true once it is whole, whatever its Delta version', async () => {
    // Each landing read moves the fake clock to 1 s past the first deadline, so a run with a deadline stops after one part.
    const t = sinkSetup({
      parts: { ...DEFAULT_PART_LIMITS, maxFiles: 1 },
      sources: (landing): SourceObjects => ({
        open: async (ref, identity) => {
          t.at(0, 1000);
          return landing.open(ref, identity);
        },
        openRandom: (ref, identity) => landing.openRandom(ref, identity),
      }),
    });
    let head = 0;
    const caughtUp = () => sinksCaughtUp(['t'], async () => head, t.cursors);
    /** What `inlet table` says, from the log alone. */
    const shown = async () => {
      const { version, position } = await readBronzeTable('t', t.delta);
      return { version, ...position };
    };
    expect(await caughtUp()).toBe(true);
    t.commit(1);
    head = 1;
    expect(await caughtUp()).toBe(false);

    // Half of version 1 is in: Delta version 0, which "Delta version = head - 1" took for done.
    expect(await t.catchUp(after(0) + 1)).toMatchObject({ written: [0], versions: [], caughtUp: false });
    expect(await t.cursors.get('t')).toMatchObject({ manifestVersion: 0, filesDone: 1, deltaVersion: 0 });
    expect(await caughtUp()).toBe(false);
    expect(await shown()).toEqual({ version: 0, manifestVersion: 0, filesDone: 1 });

    // Whole at Delta version 1: done, which "Delta version = head - 1" never said.
    expect(await t.catchUp()).toMatchObject({ written: [1], versions: [1], caughtUp: true });
    expect(await caughtUp()).toBe(true);
    expect(await shown()).toEqual({ version: 1, manifestVersion: 1, filesDone: 0 });

    // Another writer's commit, then version 2 in two parts: Delta versions 3 and 4.
    t.delta.commits.set(2, `${JSON.stringify({ commitInfo: { operation: 'OPTIMIZE' } })}\n`);
    t.commit(2);
    head = 2;
    expect(await caughtUp()).toBe(false);
    expect(await t.catchUp()).toMatchObject({ written: [3, 4], versions: [2] });
    expect(await caughtUp()).toBe(true);
    expect(await shown()).toEqual({ version: 4, manifestVersion: 2, filesDone: 0 });
  });
});
