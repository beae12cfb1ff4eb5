/**
 * What the bronze sink's DeltaStore and SinkCursorStore ports promise, for the fakes (the simulation's and
 * the unit tests') and the S3/DynamoDB adapters alike: a fake that answers otherwise would let the
 * simulation prove a protocol the adapters do not run.
 */
import { describe, expect, it } from 'vitest';
import type { DeltaStore, SinkCursor, SinkCursorStore } from '../../shared/bronze/ports.ts';
import { freshTable } from './target.ts';

/** One implementation under contract; `delta` opens a fresh, empty table root each call. */
export interface BronzeTarget {
  readonly delta: () => DeltaStore;
  readonly cursors: SinkCursorStore;
}

export type BronzeTargetFactory = () => Promise<BronzeTarget>;

const text = (bytes: Uint8Array | ArrayBuffer | undefined) =>
  bytes === undefined ? undefined : new TextDecoder().decode(bytes);

export function deltaStoreContract(target: BronzeTargetFactory): void {
  describe('DeltaStore contract', () => {
    it('putCommitIfAbsent: created once, then exists, never overwritten; an absent version reads undefined', async () => {
      const delta = (await target()).delta();

      expect(await delta.getCommit(0)).toBeUndefined();
      expect(await delta.putCommitIfAbsent(0, '{"commitInfo":{"n":1}}\n')).toBe('created');
      // A second sink, or a replay, racing on the same version must not replace the first.
      expect(await delta.putCommitIfAbsent(0, '{"commitInfo":{"n":2}}\n')).toBe('exists');

      expect(await delta.getCommit(0)).toBe('{"commitInfo":{"n":1}}\n');
    });

    it('listCommits: versions in numeric order, only log entries, and only those after `after`', async () => {
      const delta = (await target()).delta();
      for (const v of [11, 0, 2, 10, 1]) await delta.putCommitIfAbsent(v, `{"v":${v}}\n`);
      // A checkpoint and `_last_checkpoint` share the folder; they are not commits.
      await delta.putLogFile('00000000000000000010.checkpoint.parquet', new Uint8Array([1, 2, 3]));
      await delta.putLogFile('_last_checkpoint', '{"version":10}');

      expect(await delta.listCommits()).toEqual([0, 1, 2, 10, 11]);
      expect(await delta.listCommits(2)).toEqual([10, 11]);
      expect(await delta.listCommits(11)).toEqual([]);
    });

    it('log files: absent reads undefined; a put overwrites; ranged reads return exactly the bytes asked', async () => {
      const delta = (await target()).delta();
      expect(await delta.getLogFile('_last_checkpoint')).toBeUndefined();
      expect(await delta.openLogFile('_last_checkpoint')).toBeUndefined();

      await delta.putLogFile('_last_checkpoint', '{"version":1}');
      await delta.putLogFile('_last_checkpoint', new TextEncoder().encode('{"version":2}'));
      expect(text(await delta.getLogFile('_last_checkpoint'))).toBe('{"version":2}');

      const object = await delta.openLogFile('_last_checkpoint');
      expect(object?.byteLength).toBe(13);
      expect(text(await object?.slice(1, 10))).toBe('"version"');
      expect(text(await object?.slice(11))).toBe('2}');
    });

    it('streamLogFile: nothing visible before close, the whole object after; abort leaves what was there', async () => {
      const delta = (await target()).delta();
      const name = '00000000000000000005.checkpoint.parquet';
      const stream = delta.streamLogFile(name);
      await stream.write(new TextEncoder().encode('first half, '));
      expect(await delta.getLogFile(name)).toBeUndefined();
      await stream.write(new TextEncoder().encode('second half'));
      await stream.close();
      expect(text(await delta.getLogFile(name))).toBe('first half, second half');

      const dropped = delta.streamLogFile(name);
      await dropped.write(new TextEncoder().encode('never seen'));
      await dropped.abort();
      expect(text(await delta.getLogFile(name))).toBe('first half, second half');
    });
  });
}

const cursor = (table: string, deltaVersion: number, manifestVersion: number): SinkCursor => ({
  table,
  manifestVersion,
  filesDone: 0,
  deltaVersion,
  location: 's3://bucket/prefix',
  rows: 10 * manifestVersion,
  rescued: 1,
});

export function sinkCursorContract(target: BronzeTargetFactory): void {
  describe('SinkCursorStore contract', () => {
    it('a table with no cursor stands before its first version', async () => {
      const { cursors } = await target();
      const table = freshTable();
      expect(await cursors.get(table)).toMatchObject({
        table,
        manifestVersion: 0,
        filesDone: 0,
        deltaVersion: -1,
        rows: 0,
        rescued: 0,
      });
      expect(await cursors.getCleaned(table)).toBe(0);
    });

    it('advance moves the cursor once from where it was read: a second sink advancing from it is refused', async () => {
      const { cursors } = await target();
      const table = freshTable();
      const start = await cursors.get(table);

      expect(await cursors.advance(start, cursor(table, 0, 1))).toBe(true);
      // A racing sink read `start` too: its advance must not move the cursor back or twice.
      expect(await cursors.advance(start, cursor(table, 0, 2))).toBe(false);
      expect(await cursors.get(table)).toEqual(cursor(table, 0, 1));

      expect(await cursors.advance(cursor(table, 0, 1), cursor(table, 1, 2))).toBe(true);
      expect(await cursors.get(table)).toEqual(cursor(table, 1, 2));
    });

    it("advanceCleaned moves cleanSource's cursor once from where it was read", async () => {
      const { cursors } = await target();
      const table = freshTable();
      expect(await cursors.advanceCleaned(table, 0, 3)).toBe(true);
      expect(await cursors.advanceCleaned(table, 0, 4)).toBe(false);
      expect(await cursors.getCleaned(table)).toBe(3);
      expect(await cursors.advanceCleaned(table, 3, 5)).toBe(true);
      expect(await cursors.getCleaned(table)).toBe(5);
    });
  });
}
