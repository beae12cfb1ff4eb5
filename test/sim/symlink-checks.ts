/**
 * The symlink manifests' invariants (docs/protocol.md, "Symlink manifest projection"), read from the fakes'
 * raw state:
 * - SL1 (every write, seen by the fake): a manifest's recorded Delta version never decreases;
 * - SL2 (after every step): every file a manifest lists is in storage (vacuum never deleted it);
 * - SL3 (at the end, once quiet): each manifest lists exactly the live files of its partition directory at
 *   the version it records, and every directory with live files at the head has a manifest.
 * The directory of a file is read from its path (Delta writes a partition's files under `col=value/`), not
 * from its partition values as the projection does, so the two derivations check each other.
 */
import { logKey } from '../../shared/bronze/delta-log.ts';
import { applyCommit, emptyLogState } from '../../shared/bronze/log-state.ts';
import { dataFileKeyOf } from '../../shared/bronze/partition-paths.ts';
import { SYMLINK_MANIFEST_DIR } from '../../shared/bronze/symlink-manifest.ts';
import { bronzeTables, type TableView } from './bronze-checks.ts';
import { VERSION_METADATA } from './fakes/symlink-manifests.ts';
import { MANIFEST_BUCKET, type World } from './world.ts';

interface Listed {
  readonly dir: string;
  readonly version: number;
  readonly lines: string[];
}

/** The manifests of a table with `symlinkManifest`, as the bucket holds them. */
function manifestsOf(world: World, root: string): Listed[] {
  const under = `${root}${SYMLINK_MANIFEST_DIR}/`;
  return [...world.bucket.objects]
    .filter(([key]) => key.startsWith(under) && key.endsWith('manifest'))
    .map(([key, body]) => ({
      dir: key.slice(under.length, -'manifest'.length),
      version: Number(world.bucket.metadata.get(key)?.[VERSION_METADATA]),
      lines: body.split('\n').filter((l) => l !== ''),
    }));
}

const symlinked = (world: World): TableView[] =>
  bronzeTables(world).filter(
    (t) => world.config.tables.find((c) => c.name === t.name)?.bronze?.symlinkManifest === true,
  );

const keyOfLine = (line: string) => line.slice(`s3://${MANIFEST_BUCKET}/`.length);

export function checkSymlinkSafety(world: World): string[] {
  const violations = [...world.manifestRegressions];
  for (const { name, root } of symlinked(world))
    for (const { dir, version, lines } of manifestsOf(world, root))
      for (const line of lines)
        if (!world.bucket.objects.has(keyOfLine(line)))
          violations.push(
            `SL2: ${name} manifest of '${dir}' (Delta ${version}) lists ${line}, which is not there`,
          );
  return violations;
}

export function checkSymlinkComplete(world: World): string[] {
  const violations: string[] = [];
  for (const { name, root, commits } of symlinked(world)) {
    // The live files of each directory after each Delta version.
    const state = emptyLogState();
    const liveAt = new Map<number, Map<string, string[]>>();
    for (const d of commits) {
      applyCommit(state, d, world.bucket.get(`${root}${logKey(d)}`));
      const dirs = new Map<string, string[]>();
      for (const add of state.adds.values()) {
        const key = dataFileKeyOf(add.path);
        const dir = key.replace(/[^/]*$/, '');
        dirs.set(dir, [...(dirs.get(dir) ?? []), `s3://${MANIFEST_BUCKET}/${root}${key}`]);
      }
      liveAt.set(d, dirs);
    }
    const manifests = manifestsOf(world, root);
    for (const { dir, version, lines } of manifests) {
      const live = liveAt.get(version)?.get(dir);
      if (!live) {
        violations.push(
          `SL3: ${name} manifest of '${dir}' records Delta ${version}, which has no files there`,
        );
        continue;
      }
      if (JSON.stringify([...live].sort()) !== JSON.stringify([...lines].sort()))
        violations.push(
          `SL3: ${name} manifest of '${dir}' lists ${lines.length} files, not the ${live.length} live at Delta ${version}`,
        );
    }
    const head = liveAt.get(commits.at(-1) ?? -1) ?? new Map<string, string[]>();
    for (const dir of head.keys())
      if (!manifests.some((m) => m.dir === dir))
        violations.push(`SL3: ${name} has live files in '${dir}' and no manifest of them`);
  }
  return violations;
}
