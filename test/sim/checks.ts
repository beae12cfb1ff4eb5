/**
 * The invariants of docs/protocol.md, read from the fakes' raw state (never through the ports):
 * I1 no file in two versions or twice in one; I3 versions contiguous from 1, never forked, a manifest
 * never rewritten; at the end I2/I5 every file whose event arrived is committed exactly once or
 * quarantined, nothing dead-lettered, no table wedged.
 */
import { batchKey, tableKey } from '../../shared/ingestion/ledger-keys.ts';
import type { Manifest } from '../../shared/ingestion/manifest.ts';
import { BATCH_STATE } from '../../shared/ingestion/model.ts';
import { fileIdentity } from '../../shared/ingestion/routing.ts';
import type { World } from './world.ts';

export interface Expected {
  /** `${table}#${identity}` of every file an event named. */
  readonly files: Set<string>;
  /** Ids of records that must be in quarantine. */
  readonly quarantined: Set<string>;
}

function manifests(world: World, table: string): Manifest[] {
  const prefix = `${table}/_manifests/`;
  return [...world.bucket.objects]
    .filter(([key]) => key.startsWith(prefix))
    .map(([, body]) => JSON.parse(body) as Manifest)
    .sort((a, b) => a.version - b.version);
}

/** Where each file of a table is committed: `${table}#${identity}` -> `v<version> (<batch>)`. */
export function committedVersions(world: World): Map<string, string[]> {
  const where = new Map<string, string[]>();
  for (const table of world.config.tables) {
    for (const manifest of manifests(world, table.name)) {
      for (const file of manifest.files) {
        const id = `${table.name}#${fileIdentity(table, file)}`;
        where.set(id, [...(where.get(id) ?? []), `v${manifest.version} (${manifest.batchIds.join(',')})`]);
      }
    }
  }
  return where;
}

export function checkSafety(world: World): string[] {
  const violations: string[] = [];
  for (const [id, versions] of committedVersions(world)) {
    if (versions.length > 1)
      violations.push(`I1: ${id} committed ${versions.length} times: ${versions.join(', ')}`);
  }
  for (const table of world.config.tables) {
    const versions = manifests(world, table.name).map((m) => m.version);
    versions.forEach((v, i) => {
      if (v !== i + 1) violations.push(`I3: ${table.name} versions not contiguous: ${versions.join(',')}`);
    });
    const head = (world.db.get(tableKey(table.name))?.head as number | undefined) ?? 0;
    if (head > versions.length)
      violations.push(`I3: ${table.name} head ${head} but ${versions.length} manifests`);
  }
  for (const [key, bodies] of world.bucket.history) {
    if (key.includes('/_manifests/') && new Set(bodies).size > 1)
      violations.push(`I3: manifest ${key} rewritten`);
  }
  return [...new Set(violations)];
}

export function checkLiveness(world: World, expected: Expected): string[] {
  const violations: string[] = [];
  const committed = committedVersions(world);
  for (const id of expected.files) {
    if (committed.has(id)) continue;
    const [table, ...rest] = id.split('#');
    const claim = world.db.get({ pk: `FILE#${table}#${rest.join('#')}`, sk: 'F' });
    const batch = claim && world.db.get(batchKey(table as string, claim.batchId as string));
    violations.push(
      `I2: ${id} is in no manifest and not quarantined (ledger: ${
        claim
          ? `claimed by ${claim.batchId}, batch ${batch?.state ?? 'missing'} v${batch?.version ?? '-'}`
          : 'no claim'
      })`,
    );
  }
  const quarantined = new Set(
    world.db
      .all()
      .filter((i) => String(i.pk).startsWith('QUARANTINE#'))
      .map((i) => i.sk),
  );
  for (const id of expected.quarantined)
    if (!quarantined.has(id)) violations.push(`I5: record ${id} not quarantined`);
  for (const queue of [world.ingest, world.commits]) {
    for (const m of queue.dlq)
      violations.push(`I5: ${queue.name} message dead-lettered: ${m.body.slice(0, 120)}`);
  }
  violations.push(...wedged(world));
  return violations;
}

/** Work the ledger still holds: once the pipeline is quiet, any of it is a wedged table or a lost event. */
export function wedged(world: World): string[] {
  const found: string[] = [];
  for (const item of world.db.all()) {
    if (String(item.pk).startsWith('TABLE#') && item.pending)
      found.push(`I5: ${item.pk} keeps pending ${JSON.stringify(item.pending)}`);
    if (item.state === BATCH_STATE.sealed)
      found.push(`I5: batch ${item.table}/${item.batchId} SEALED, never committed`);
    // Its BatchCommitted event is what wakes the bronze sink (and any other consumer of the bus).
    if (item.state === BATCH_STATE.committed && !item.publishedAt)
      found.push(`I5: batch ${item.table}/${item.batchId} COMMITTED, never published`);
  }
  return found;
}
