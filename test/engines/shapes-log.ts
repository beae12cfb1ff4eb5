/**
 * Shapes of the sink's write path (docs/bronze.md, "Writing a version", "Other writers on the table",
 * "Checkpoints"): manifest versions written in parts, each its own Delta commit; another writer's commits
 * between the sink's, stepped over by committing at the next free version; checkpoints streamed a few
 * actions per row group, each written from the one before it.
 */
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { parquetMetadata } from 'hyparquet';
import { checkpointName } from '../../shared/bronze/checkpoint.ts';
import { DEFAULT_PART_LIMITS } from '../../shared/bronze/write-version.ts';
import type { Columns, ExpectedRow, Shape } from './shape.ts';
import type { WrittenTable } from './write-table.ts';

const jsonl = (...records: readonly unknown[]) => records.map((r) => `${JSON.stringify(r)}\n`).join('');

/** A file of `{n, ...extra}` rows, and the rows it must give. */
const file = (key: string, rows: readonly ExpectedRow[]) => ({ key, body: jsonl(...rows), rows });
const version = (files: ReturnType<typeof file>[], columns?: Columns) => ({
  files: Object.fromEntries(files.map((f) => [f.key, f.body])),
  rows: Object.fromEntries(files.map((f) => [f.key, f.rows])),
  ...(columns ? { columns } : {}),
});

function claim(ok: boolean, what: string): void {
  if (!ok) throw new Error(`the table is not the shape it claims: ${what}`);
}

async function rowGroups(t: WrittenTable, deltaVersion: number): Promise<number> {
  const object = await t.clients.s3.send(
    new GetObjectCommand({ Bucket: t.bucket, Key: `${t.prefix}/_delta_log/${checkpointName(deltaVersion)}` }),
  );
  const bytes = await object.Body?.transformToByteArray();
  if (!bytes) throw new Error(`no checkpoint ${deltaVersion}`);
  return parquetMetadata(
    bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
  ).row_groups.length;
}

const PROPERTIES = { 'inlet.test.owner': 'analytics' };

export const LOG_SHAPES: readonly Shape[] = [
  {
    name: 'parts-other-writers-streamed-checkpoints',
    bronze: { format: 'jsonl', checkpointInterval: 2 },
    // One landing file a part; checkpoints of two actions a row group.
    sink: { parts: { ...DEFAULT_PART_LIMITS, maxFiles: 1 }, checkpointRows: 2 },
    // Delta 0-2: version 1 in three parts (checkpoint at 2); 3: another writer sets a table property;
    // 4-5: version 2 in two parts, adding a column (checkpoint at 4); 6: another writer's logged VACUUM,
    // which the sink checkpoints (streamed from the one at 4) before it commits version 3 at 7.
    versions: [
      version(
        [file('p1.json', [{ n: 1 }, { n: 2 }]), file('p2.json', [{ n: 3 }]), file('p3.json', [{ n: 4 }])],
        [['n', 'long']],
      ),
      {
        ...version(
          [file('q1.json', [{ n: 5, tag: 'x' }]), file('q2.json', [{ n: 6, tag: 'y' }])],
          [
            ['n', 'long'],
            ['tag', 'string'],
          ],
        ),
        beforeSink: async (t) => {
          const metaData = await t.metaData();
          await t.commitAsOther(
            {
              operation: 'SET TBLPROPERTIES',
              operationParameters: { properties: JSON.stringify(PROPERTIES) },
              engineInfo: 'delta-rs:py-1.6.6',
            },
            { metaData: { ...metaData, configuration: { ...metaData.configuration, ...PROPERTIES } } },
          );
        },
      },
      {
        ...version([file('r1.json', [{ n: 7, tag: 'z' }])]),
        beforeSink: (t) =>
          t.commitAsOther({
            operation: 'VACUUM END',
            operationParameters: { status: 'COMPLETED' },
            engineInfo: 'delta-rs:py-1.6.6',
          }),
      },
    ],
    written: async (t) => {
      const kinds = t.log.map((e) => (e.kind === 'sink' ? `v${e.index + 1}` : 'other')).join(' ');
      claim(kinds === 'v1 v1 v1 other v2 v2 other v3', `its Delta versions are ${kinds}`);
      claim((await t.lastCheckpoint()) === 6, `_last_checkpoint names ${await t.lastCheckpoint()}`);
      for (const v of [2, 4, 6]) {
        const groups = await rowGroups(t, v);
        claim(groups > 1, `checkpoint ${v} has ${groups} row group(s)`);
      }
      const configuration = (await t.metaData()).configuration ?? {};
      claim(
        configuration['inlet.test.owner'] === 'analytics',
        `the sink's schema change dropped the other writer's property: ${JSON.stringify(configuration)}`,
      );
    },
  },
];
