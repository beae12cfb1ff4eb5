/**
 * The bronze sink's invariants, read from the fakes' raw state (never through the ports). After every
 * step: the table's Delta versions are 0..k with no gap, each version d was written once and holds exactly
 * the rows of manifest version d+1's files (no fork, no rewrite, no row twice, none of another version). At
 * the end, once the pipeline is quiet: every committed manifest version is in the Delta table, the rows of
 * the table are the rows of those versions' files, each once, the cursor is at the last version and counts
 * them, and every checkpoint equals a replay of the commits up to it.
 */
import { isDeepStrictEqual } from 'node:util';
import { parquetReadObjects } from 'hyparquet';
import { readCheckpoint } from '../../shared/bronze/checkpoint.ts';
import { bronzeLocation } from '../../shared/bronze/config.ts';
import { logKey, sinkAppId } from '../../shared/bronze/delta-log.ts';
import { applyCommit, emptyLogState, type LogState } from '../../shared/bronze/log-state.ts';
import { type Manifest, manifestKey } from '../../shared/manifest.ts';
import { fromBody, sinkCursorKey } from './fakes/bronze.ts';
import type { Rng } from './scheduler.ts';
import { CONFIG, MANIFEST_BUCKET, type World } from './world.ts';

/**
 * A landing file's body: JSON Lines with a unique id per row; sometimes a column no earlier row had (the
 * schema evolves), a value of the wrong type (rescued, the row kept) or a line that is not JSON (a row of
 * its own, all in `_rescued_data`).
 */
export function landingBody(rng: Rng, file: number): string {
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

/** What each row of a landing file is known by in the table: its file and id, or its raw text. */
function expectedRows(world: World, manifest: Manifest): string[] {
  return manifest.files.flatMap((ref) =>
    world.landing
      .get(ref.key)
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => {
        try {
          return `${sourceUrl(ref.key)}|${(JSON.parse(line) as { id: string }).id}|v${manifest.version}`;
        } catch {
          return `${sourceUrl(ref.key)}|raw:${line}|v${manifest.version}`;
        }
      }),
  );
}

async function rowsOfFile(world: World, key: string): Promise<string[]> {
  const bytes = fromBody(world.bucket.get(key));
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const rows = (await parquetReadObjects({ file })) as Array<Record<string, unknown>>;
  return rows.map((row) => {
    const rescued = row._rescued_data ? (JSON.parse(String(row._rescued_data)) as object) : {};
    const id = row.id ?? `raw:${(rescued as { _corrupt_record?: string })._corrupt_record}`;
    return `${row._source_file}|${id}|v${row._manifest_version}`;
  });
}

const sorted = (xs: string[]) => [...xs].sort();
const same = (a: string[], b: string[]) => JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));

interface TableView {
  readonly name: string;
  /** `<prefix>/` of the Delta table in the manifest bucket. */
  readonly root: string;
  readonly commits: number[];
}

function bronzeTables(world: World): TableView[] {
  return CONFIG.tables.flatMap((table) => {
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

function manifestOf(world: World, table: string, version: number): Manifest | undefined {
  const body = world.bucket.objects.get(manifestKey(table, version));
  return body === undefined ? undefined : (JSON.parse(body) as Manifest);
}

/** Commits already found to hold their manifest's rows: each is read once per seed, not every step. */
const verified = new WeakMap<World, Set<string>>();

export async function checkDelta(world: World): Promise<string[]> {
  const violations: string[] = [];
  const done = verified.get(world) ?? new Set<string>();
  verified.set(world, done);
  for (const { name, root, commits } of bronzeTables(world)) {
    commits.forEach((d, i) => {
      if (d !== i) violations.push(`D1: ${name} Delta versions not contiguous from 0: ${commits.join(',')}`);
    });
    for (const d of commits) {
      const key = `${root}${logKey(d)}`;
      const bodies = world.bucket.history.get(key) ?? [];
      if (new Set(bodies).size > 1) violations.push(`D2: ${name} Delta log entry ${d} rewritten`);
      if (done.has(key)) continue;
      const state = emptyLogState();
      applyCommit(state, d, world.bucket.get(key));
      const manifestVersion = state.txns.get(sinkAppId(name))?.version;
      const manifest = manifestOf(world, name, d + 1);
      if (manifestVersion !== d + 1 || !manifest) {
        violations.push(
          `D2: ${name} Delta version ${d} carries manifest version ${manifestVersion}; manifest ${d + 1} ${manifest ? 'exists' : 'missing'}`,
        );
        continue;
      }
      const rows: string[] = [];
      for (const add of state.adds.values()) rows.push(...(await rowsOfFile(world, `${root}${add.path}`)));
      const expected = expectedRows(world, manifest);
      if (!same(rows, expected))
        violations.push(
          `D2: ${name} Delta version ${d} holds ${rows.length} rows, not the ${expected.length} of manifest ${d + 1}'s files (${manifest.batchIds.join(',')})`,
        );
      done.add(key);
    }
    // A data file of a committed version is never written again with other bytes.
    for (const [key, bodies] of world.bucket.history)
      if (key.startsWith(root) && !key.includes('_delta_log/') && new Set(bodies).size > 1)
        violations.push(`D2: ${name} data file ${key.slice(root.length)} rewritten with other bytes`);
  }
  return [...new Set(violations)];
}

/** Once the pipeline is quiet: the Delta table has every committed version, each row once. */
export async function checkDeltaComplete(world: World): Promise<string[]> {
  const violations: string[] = [];
  for (const { name, root, commits } of bronzeTables(world)) {
    let head = 0;
    while (manifestOf(world, name, head + 1)) head += 1;
    if (commits.length !== head) {
      violations.push(`D3: ${name} has ${head} manifest versions but Delta versions ${commits.join(',')}`);
      continue;
    }
    const state = emptyLogState();
    const replayed = new Map<number, LogState>();
    for (const d of commits) {
      applyCommit(state, d, world.bucket.get(`${root}${logKey(d)}`));
      replayed.set(d, structuredClone(state));
    }
    const rows: string[] = [];
    for (const add of state.adds.values()) rows.push(...(await rowsOfFile(world, `${root}${add.path}`)));
    const expected: string[] = [];
    for (let v = 1; v <= head; v++)
      expected.push(...expectedRows(world, manifestOf(world, name, v) as Manifest));
    if (new Set(rows).size !== rows.length) violations.push(`D3: ${name} holds a row twice`);
    if (!same(rows, expected))
      violations.push(
        `D3: ${name} holds ${rows.length} rows; its ${head} versions' files have ${expected.length}`,
      );
    const cursor = world.db.get(sinkCursorKey(name));
    if ((cursor?.deltaVersion ?? -1) !== head - 1 || (head > 0 && cursor?.rows !== expected.length))
      violations.push(
        `D3: ${name} sink cursor at ${cursor?.deltaVersion ?? -1} counting ${cursor?.rows ?? 0} rows; table at ${head - 1} with ${expected.length}`,
      );
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
