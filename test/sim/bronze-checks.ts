/**
 * The bronze sink's invariants, read from the fakes' raw state (never through the ports). After every
 * step: the table's Delta versions are 0..k with no gap, each written once; each commit of ours moves the
 * table on from where the ones before it left it (the next part of the version, or its rest) and holds
 * exactly one write's rows of each manifest file it covers (no fork, no rewrite, no row twice, none of
 * another version; a path-identity table may read a key rewritten since its event); another writer's commits
 * are stepped over. At the end, once the pipeline is quiet: every committed manifest version is in the Delta
 * table, the rows of its live files are the rows of those versions' files, each once (a compaction moved
 * some, lost none), the cursor is at the last version and
 * counts them, another writer's table properties are still there, and every checkpoint equals a replay of
 * the commits up to it.
 */
import { isDeepStrictEqual } from 'node:util';
import { parquetReadObjects } from 'hyparquet';
import { cursorFromItem } from '../../shared/bronze/aws/dynamodb-sink-cursor.ts';
import { readCheckpoint } from '../../shared/bronze/checkpoint.ts';
import { bronzeLocation } from '../../shared/bronze/config.ts';
import type { TxnAction } from '../../shared/bronze/delta-actions.ts';
import {
  comparePositions,
  logKey,
  parseCommit,
  partTxnVersion,
  positionOf,
  sinkAppId,
  sinkPartAppId,
} from '../../shared/bronze/delta-log.ts';
import { applyCommit, emptyLogState, type LogState } from '../../shared/bronze/log-state.ts';
import type { SinkPosition } from '../../shared/bronze/ports.ts';
import { type Manifest, manifestKey } from '../../shared/ingestion/manifest.ts';
import { fromBody, sinkCursorKey } from './fakes/bronze.ts';
import type { Rng } from './scheduler.ts';
import { MANIFEST_BUCKET, type World } from './world.ts';

/**
 * A landing file's body: JSON Lines with a unique id per row; sometimes a column no earlier row had (the
 * schema evolves), a value of the wrong type (rescued, the row kept) or a line that is not JSON (a row of
 * its own, all in `_rescued_data`).
 */
export function landingBody(rng: Rng, file: number | string): string {
  const lines: string[] = [];
  for (let row = 0, rows = rng.int(1, 4); row < rows; row++) {
    const record: Record<string, unknown> = { id: `f${file}-${row}`, n: row };
    if (rng.chance(0.2)) record[`c${rng.int(1, 3)}`] = rng.chance(0.5) ? 'x' : 1.5;
    if (rng.chance(0.15)) record.n = 'not a number';
    lines.push(JSON.stringify(record));
  }
  if (rng.chance(0.15)) lines.splice(rng.int(0, lines.length), 0, `not json ${file}`);
  return `${lines.join('\n')}\n`;
}

const sourceUrl = (key: string) => `s3://landing/${key}`;

/** What each row of a landing file's body is known by in the table: its file and id, or its raw text. */
export function rowsOfBody(key: string, body: string, version: number): string[] {
  return body
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return `${sourceUrl(key)}|${(JSON.parse(line) as { id: string }).id}|v${version}`;
      } catch {
        return `${sourceUrl(key)}|raw:${line}|v${version}`;
      }
    });
}

/**
 * Why `rows` (of one Delta version, or of the whole table) are not exactly one write's rows of each file
 * of `manifests`, or undefined. Any write of the key counts: a path-identity table reads what the key holds
 * when the sink gets to it, which a producer may have rewritten since the event (the clean scenario). A
 * file with no rows is a file the sink found missing: nothing in the simulation deletes a landing file but
 * cleanSource, so that is a row lost to a clean.
 */
function mismatch(world: World, manifests: readonly Manifest[], rows: readonly string[]): string | undefined {
  const byFile = new Map<string, string[]>();
  for (const row of rows) {
    const file = row.slice(0, row.indexOf('|'));
    byFile.set(file, [...(byFile.get(file) ?? []), row]);
  }
  const named = new Set(manifests.flatMap((m) => m.files.map((f) => `${sourceUrl(f.key)}@${m.version}`)));
  for (const manifest of manifests) {
    for (const ref of manifest.files) {
      const tag = `|v${manifest.version}`;
      const got = (byFile.get(sourceUrl(ref.key)) ?? []).filter((r) => r.endsWith(tag));
      const writes = world.landing.history.get(ref.key) ?? [];
      if (!writes.some((body) => same(got, rowsOfBody(ref.key, body, manifest.version))))
        return `${ref.key} of manifest ${manifest.version} has ${got.length} rows, none of its ${writes.length} write(s)' rows`;
    }
  }
  for (const row of rows) {
    const version = row.slice(row.lastIndexOf('|v') + 2);
    if (!named.has(`${row.slice(0, row.indexOf('|'))}@${version}`)) return `row ${row} of no manifest file`;
  }
  return undefined;
}

export async function rowsOfFile(world: World, key: string): Promise<string[]> {
  const bytes = fromBody(world.bucket.get(key));
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const rows = (await parquetReadObjects({ file })) as Array<Record<string, unknown>>;
  return rows.map((row) => {
    const rescued = row._rescued_data ? (JSON.parse(String(row._rescued_data)) as object) : {};
    const id = row.id ?? `raw:${(rescued as { _corrupt_record?: string })._corrupt_record}`;
    return `${row._source_file}|${id}|v${row._manifest_version}`;
  });
}

const sorted = (xs: readonly string[]) => [...xs].sort();
export const same = (a: readonly string[], b: readonly string[]) =>
  JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));

export interface TableView {
  readonly name: string;
  /** `<prefix>/` of the Delta table in the manifest bucket. */
  readonly root: string;
  readonly commits: number[];
}

export function bronzeTables(world: World): TableView[] {
  return world.config.tables.flatMap((table) => {
    if (!table.bronze) return [];
    const { bucket, prefix } = bronzeLocation(table.name, table.bronze, MANIFEST_BUCKET);
    if (bucket !== MANIFEST_BUCKET) throw new Error(`bronze table ${table.name} outside the manifest bucket`);
    const root = `${prefix}/`;
    const log = `${root}_delta_log/`;
    const commits = [...world.bucket.objects.keys()]
      .filter((k) => k.startsWith(log) && /^\d{20}\.json$/.test(k.slice(log.length)))
      .map((k) => Number(k.slice(log.length, -'.json'.length)))
      .sort((a, b) => a - b);
    return [{ name: table.name, root, commits }];
  });
}

export function manifestOf(world: World, table: string, version: number): Manifest | undefined {
  const body = world.bucket.objects.get(manifestKey(table, version));
  return body === undefined ? undefined : (JSON.parse(body) as Manifest);
}

/** Where the verified prefix of each table's log left it: commits are immutable (D2), so it only grows. */
interface Verified {
  /** Delta versions verified, 0..through. */
  through: number;
  position: SinkPosition;
}
const verified = new WeakMap<World, Map<string, Verified>>();

/**
 * Which files of which manifest version one of our commits covers, from the position before it and the
 * txn it carries: a version's parts follow each other without gap or overlap, and the commit that completes
 * a version covers the rest of it. Undefined (with a violation) when the txn does not follow the position.
 */
function rangeOf(
  name: string,
  d: number,
  before: SinkPosition,
  after: SinkPosition,
  files: number | undefined,
  violations: string[],
): { version: number; from: number; to: number } | undefined {
  if (comparePositions(after, before) <= 0) {
    violations.push(
      `D2: ${name} Delta version ${d} does not move the table on (${JSON.stringify(before)} -> ${JSON.stringify(after)})`,
    );
    return undefined;
  }
  const version = before.manifestVersion + 1;
  const complete = after.filesDone === 0;
  if (complete ? after.manifestVersion !== version : after.manifestVersion !== before.manifestVersion) {
    violations.push(
      `D2: ${name} Delta version ${d} skips from ${JSON.stringify(before)} to ${JSON.stringify(after)}`,
    );
    return undefined;
  }
  return { version, from: before.filesDone, to: complete ? (files ?? 0) : after.filesDone };
}

/**
 * After every step: the Delta versions are 0..k, each written once; each of our commits moves the table on
 * from where the commits before it left it and holds exactly the rows of the manifest files it covers; other
 * writers' commits are only what they may be (a compaction keeps rows: checked at the end).
 */
export async function checkDelta(world: World): Promise<string[]> {
  const violations: string[] = [];
  const done = verified.get(world) ?? new Map<string, Verified>();
  verified.set(world, done);
  for (const { name, root, commits } of bronzeTables(world)) {
    commits.forEach((d, i) => {
      if (d !== i) violations.push(`D1: ${name} Delta versions not contiguous from 0: ${commits.join(',')}`);
    });
    for (const d of commits) {
      const bodies = world.bucket.history.get(`${root}${logKey(d)}`) ?? [];
      if (new Set(bodies).size > 1) violations.push(`D2: ${name} Delta log entry ${d} rewritten`);
    }
    const table = done.get(name) ?? { through: -1, position: { manifestVersion: 0, filesDone: 0 } };
    done.set(name, table);
    const state = emptyLogState();
    for (const d of commits) {
      if (d <= table.through) continue;
      const text = world.bucket.get(`${root}${logKey(d)}`);
      applyCommit(state, d, text);
      if (!parseCommit(name, text).ours) {
        table.through = d;
        continue;
      }
      const ids = new Map([...state.txns].filter(([id]) => id.startsWith(`inlet-bronze-${name}`)));
      const merged = new Map([...txnsOf(table.position, name), ...ids]);
      const after = positionOf(name, merged);
      const manifest = manifestOf(world, name, table.position.manifestVersion + 1);
      const range = rangeOf(name, d, table.position, after, manifest?.files.length, violations);
      if (!range) break;
      if (!manifest) {
        violations.push(
          `D2: ${name} Delta version ${d} covers manifest version ${range.version}, which is missing`,
        );
        break;
      }
      const rows: string[] = [];
      const added = emptyLogState();
      applyCommit(added, d, text);
      // A file the commit names and storage lacks (a vacuum took it) is a broken table, not a crash of the check.
      const missing = [...added.adds.keys()].find((path) => !world.bucket.objects.has(`${root}${path}`));
      if (missing) {
        violations.push(`D2: ${name} Delta version ${d} names ${missing}, which is not there`);
        break;
      }
      for (const add of added.adds.values()) rows.push(...(await rowsOfFile(world, `${root}${add.path}`)));
      const part = { ...manifest, files: manifest.files.slice(range.from, range.to) };
      const wrong = mismatch(world, [part], rows);
      if (wrong) {
        violations.push(
          `D2: ${name} Delta version ${d} does not hold manifest ${range.version}'s files ${range.from}-${range.to - 1} (${manifest.batchIds.join(',')}): ${wrong}`,
        );
        break;
      }
      table.position = after;
      table.through = d;
      state.txns.clear();
    }
    // A data file is never written twice with other bytes (each attempt names its own).
    for (const [key, bodies] of world.bucket.history)
      if (
        key.startsWith(root) &&
        !/\/_(delta_log|symlink_format_manifest)\//.test(`/${key.slice(root.length)}`) &&
        new Set(bodies).size > 1
      )
        violations.push(`D2: ${name} data file ${key.slice(root.length)} rewritten with other bytes`);
  }
  return [...new Set(violations)];
}

/** The txns that stand for a position (the inverse of positionOf). */
function txnsOf(position: SinkPosition, name: string): Map<string, TxnAction> {
  const txns = new Map<string, TxnAction>([
    [sinkAppId(name), { appId: sinkAppId(name), version: position.manifestVersion }],
  ]);
  if (position.filesDone > 0)
    txns.set(sinkPartAppId(name), {
      appId: sinkPartAppId(name),
      version: partTxnVersion(position.manifestVersion + 1, position.filesDone),
    });
  return txns;
}

/** Every row of a bronze table at its latest commit, as `file|id|v<manifest version>`. */
export async function deltaRows(world: World, { root, commits }: TableView): Promise<string[]> {
  const state = emptyLogState();
  for (const d of commits) applyCommit(state, d, world.bucket.get(`${root}${logKey(d)}`));
  const rows: string[] = [];
  for (const add of state.adds.values()) rows.push(...(await rowsOfFile(world, `${root}${add.path}`)));
  return rows;
}

/** Once the pipeline is quiet: the Delta table has every committed version, each row once. */
export async function checkDeltaComplete(world: World): Promise<string[]> {
  const violations: string[] = [];
  for (const { name, root, commits } of bronzeTables(world)) {
    let head = 0;
    while (manifestOf(world, name, head + 1)) head += 1;
    const state = emptyLogState();
    const replayed = new Map<number, LogState>();
    let lastOurs = -1;
    let foreignProperties: string | undefined;
    for (const d of commits) {
      const text = world.bucket.get(`${root}${logKey(d)}`);
      applyCommit(state, d, text);
      replayed.set(d, structuredClone(state));
      const commit = parseCommit(name, text);
      if (commit.ours) lastOurs = d;
      else if (commit.metaData) foreignProperties = commit.metaData.configuration?.['foreign.round'];
    }
    const position = positionOf(name, state.txns);
    if (position.manifestVersion !== head || position.filesDone !== 0) {
      violations.push(
        `D3: ${name} has ${head} manifest versions but its Delta table is at ${JSON.stringify(position)}`,
      );
      continue;
    }
    const rows: string[] = [];
    for (const add of state.adds.values()) rows.push(...(await rowsOfFile(world, `${root}${add.path}`)));
    const manifests: Manifest[] = [];
    for (let v = 1; v <= head; v++) manifests.push(manifestOf(world, name, v) as Manifest);
    if (new Set(rows).size !== rows.length) violations.push(`D3: ${name} holds a row twice`);
    const wrong = mismatch(world, manifests, rows);
    if (wrong)
      violations.push(`D3: ${name} holds ${rows.length} rows, not its ${head} versions' files: ${wrong}`);
    const cursor = cursorFromItem(name, world.db.get(sinkCursorKey(name)));
    if (
      cursor.manifestVersion !== head ||
      cursor.filesDone !== 0 ||
      cursor.deltaVersion !== lastOurs ||
      (head > 0 && cursor.rows !== rows.length)
    )
      violations.push(
        `D3: ${name} sink cursor at ${cursor.manifestVersion}+${cursor.filesDone} (Delta ${cursor.deltaVersion}) counting ${cursor.rows} rows; table at ${head} (Delta ${lastOurs}) with ${rows.length}`,
      );
    // Another writer's table properties survive the sink's later schema changes.
    if (foreignProperties !== undefined && state.metaData?.configuration?.['foreign.round'] === undefined)
      violations.push(`D3: ${name} lost another writer's table properties`);
    for (const [key, body] of world.bucket.objects) {
      const match = key.slice(`${root}_delta_log/`.length).match(/^(\d{20})\.checkpoint\.parquet$/);
      if (!key.startsWith(`${root}_delta_log/`) || !match) continue;
      const v = Number(match[1]);
      if (!isDeepStrictEqual(await readCheckpoint(v, fromBody(body)), replayed.get(v)))
        violations.push(`D3: ${name} checkpoint ${v} differs from its commits`);
    }
  }
  for (const m of world.sinkQueue.dlq) violations.push(`I5: sink message dead-lettered: ${m.body}`);
  return violations;
}
