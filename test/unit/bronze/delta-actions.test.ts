// The Delta actions as one set of schemas (PROTOCOL.md "Actions"): what the writer builds is what every
// reader decodes; a log entry that is no action says where it is; what a reader does not know it skips,
// unless the protocol's reader features say it must not.
import { describe, expect, it } from 'vitest';
import {
  CheckpointWriter,
  checkpointName,
  LAST_CHECKPOINT,
  readCheckpoint,
} from '../../../shared/bronze/checkpoint.ts';
import { parseActions, serializeActions } from '../../../shared/bronze/delta-actions.ts';
import { buildCommit, parseCommit } from '../../../shared/bronze/delta-log.ts';
import { InvalidDeltaLogError, UnreadableTableError } from '../../../shared/bronze/errors.ts';
import { applyCommit, emptyLogState } from '../../../shared/bronze/log-state.ts';
import { loadSnapshot } from '../../../shared/bronze/snapshot.ts';
import { readBronzeTable } from '../../../shared/bronze/table-state.ts';
import { MemoryDelta } from './memory.ts';

const commit = (version: number, previous?: ReturnType<typeof parseCommit>['metaData']) =>
  buildCommit({
    table: 't',
    location: 's3://mb/t/_bronze',
    manifestVersion: version + 1,
    batchIds: [`B${version}`],
    sourceFiles: { from: 0, to: 1, of: 1 },
    previous,
    schema: [{ name: 'id', type: 'long' }],
    schemaChanged: false,
    files: [
      {
        path: `part-${version}.parquet`,
        rows: 2,
        rescued: 1,
        size: 10,
        stats: JSON.stringify({
          numRecords: 2,
          minValues: { id: 1 },
          maxValues: { id: 2 },
          nullCount: { id: 0 },
        }),
      },
    ],
    missingSources: [],
    timestamp: 1_000 + version,
  });

describe('the Delta actions', () => {
  it('the writer writes actions its readers decode to the same values, field for field', () => {
    const text = commit(0);
    const actions = parseActions({ table: 't', version: 0 }, text);
    expect(actions.map((a) => Object.keys(a)[0])).toEqual([
      'commitInfo',
      'protocol',
      'metaData',
      'txn',
      'add',
    ]);
    // Every field as written, nothing dropped or added (JSON objects have no key order to keep).
    expect(actions).toEqual(
      text
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line)),
    );
    expect(parseActions({ table: 't', version: 0 }, serializeActions(actions))).toEqual(actions);
  });

  it('a line that is not JSON names the table, the version and the line', () => {
    const text = `${commit(0)}{"add":\n`;
    const error = (() => {
      try {
        parseCommit('t', text, 4);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(InvalidDeltaLogError);
    expect((error as Error).message).toMatch(/^bronze table t: _delta_log version 4, line 6: not JSON/);
    expect(() => applyCommit(emptyLogState(), 4, text, { table: 't' })).toThrow(InvalidDeltaLogError);
  });

  it('an action missing a required field, or with one of another type, is refused with the field named', () => {
    const lines = [
      '{"add":{"path":"a.parquet","partitionValues":{},"modificationTime":1,"dataChange":true}}',
      '{"txn":{"appId":"x","version":"7"}}',
    ];
    for (const [i, line] of lines.entries())
      expect(() => parseActions({ table: 't', version: 2 }, `{"commitInfo":{}}\n${line}\n`), line).toThrow(
        new RegExp(`version 2, line 2: not an? \\w+ action: ${i === 0 ? 'size' : 'version'}`),
      );
  });

  it('skips actions and fields it does not know (PROTOCOL.md "Protocol Evolution"), and keeps them in the metaData it rewrites', () => {
    const text = [
      commit(0).trimEnd(),
      '{"domainMetadata":{"domain":"delta.clustering","configuration":"{}","removed":false}}',
      '{"cdc":{"path":"_change_data/c.parquet","partitionValues":{},"size":1,"dataChange":false}}',
      '{"add":{"path":"b.parquet","partitionValues":{},"size":3,"modificationTime":1,"dataChange":true,"baseRowId":7,"clusteringProvider":"liquid"}}',
    ].join('\n');
    const state = emptyLogState();
    applyCommit(state, 0, text, { table: 't' });
    expect([...state.adds.keys()]).toEqual(['part-0.parquet', 'b.parquet']);
    expect(state.adds.get('b.parquet')).toMatchObject({ baseRowId: 7, clusteringProvider: 'liquid' });

    const previous = {
      ...(state.metaData as NonNullable<typeof state.metaData>),
      futureField: { kept: true },
    };
    const next = parseCommit('t', buildCommit({ ...commitInput(1), previous, schemaChanged: true }));
    expect(next.metaData).toMatchObject({ futureField: { kept: true } });
  });

  it('a checkpoint row that is no action makes the checkpoint unreadable: the error names its file and row, the log is replayed without it', async () => {
    const delta = new MemoryDelta();
    delta.commits.set(0, commit(0));
    delta.commits.set(1, commit(1, parseCommit('t', commit(0)).metaData));
    const { state } = await loadSnapshot(delta);
    // A checkpoint of version 1 whose txn row has no appId (another writer's bug, a torn rewrite).
    const name = checkpointName(1);
    const out = delta.streamLogFile(name);
    const writer = new CheckpointWriter(out);
    if (state.protocol) await writer.write({ protocol: state.protocol });
    if (state.metaData) await writer.write({ metaData: state.metaData });
    await writer.write({ txn: { appId: null as unknown as string, version: 2 } });
    for (const add of state.adds.values()) await writer.write({ add });
    const written = await writer.finish();
    await out.close();
    await delta.putLogFile(LAST_CHECKPOINT, JSON.stringify({ version: 1, ...written }));

    await expect(readCheckpoint(1, delta.logFiles.get(name) as Uint8Array)).rejects.toThrow(
      `Delta table: checkpoint ${name}, row 3: not a txn action: appId`,
    );
    const replayed = await loadSnapshot(delta);
    expect(replayed.checkpointVersion).toBeUndefined();
    expect(replayed.state).toEqual(state);
  });

  it('`inlet table` refuses a table whose protocol needs a reader feature it lacks, rather than count it wrong', async () => {
    const delta = new MemoryDelta();
    delta.commits.set(0, commit(0));
    delta.commits.set(
      1,
      serializeActions([
        {
          protocol: {
            minReaderVersion: 3,
            minWriterVersion: 7,
            readerFeatures: ['deletionVectors'],
            writerFeatures: ['deletionVectors'],
          },
        },
      ]),
    );
    await expect(readBronzeTable('t', delta)).rejects.toThrow(UnreadableTableError);
    await expect(readBronzeTable('t', delta)).rejects.toThrow('reader features this sink does not implement');
  });
});

function commitInput(version: number) {
  return {
    table: 't',
    location: 's3://mb/t/_bronze',
    manifestVersion: version + 1,
    batchIds: [`B${version}`],
    sourceFiles: { from: 0, to: 1, of: 1 },
    previous: undefined,
    schema: [{ name: 'id', type: 'long' as const }],
    schemaChanged: false,
    files: [],
    missingSources: [],
    timestamp: 1_000 + version,
  };
}
