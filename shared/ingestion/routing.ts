import picomatch from 'picomatch';
import type { PipelineConfig, TableConfig } from '../config/pipeline-config.ts';
import type { FileRef, ObjectRef } from './model.ts';
import { normalizeVersionId } from './version-id.ts';

export type RouteResult =
  | { readonly kind: 'skipped'; readonly reason: string }
  /** Cannot be ingested and must not be dropped: quarantined with the reason. */
  | { readonly kind: 'unroutable'; readonly reason: string }
  | { readonly kind: 'routed'; readonly files: readonly FileRef[] };

/**
 * A file's identity within a table. Default: the path (bucket + key), so a rewrite is not new, as
 * Auto Loader's default. With allowOverwrites: the versionId, else the eTag, is part of it.
 * Layout `<bucket>#<tag>#<key>`: bucket names have no '#', the tag has none, and the key comes last, so
 * the identity parses back unambiguously whatever the key contains.
 */
export function fileIdentity(table: Pick<TableConfig, 'allowOverwrites'>, object: ObjectRef): string {
  let tag = '-';
  if (table.allowOverwrites) {
    // Normalised here too, so no caller can build a second identity for a suspended bucket's object.
    const versionId = normalizeVersionId(object.versionId);
    if (versionId) tag = `v:${versionId}`;
    else if (object.eTag) tag = `e:${object.eTag.replace(/#/g, '')}`;
  }
  return `${object.bucket}#${tag}#${object.key}`;
}

/** Inverse of fileIdentity. */
export function parseIdentity(identity: string): { bucket: string; tag: string; key: string } {
  const first = identity.indexOf('#');
  const second = identity.indexOf('#', first + 1);
  return {
    bucket: identity.slice(0, first),
    tag: identity.slice(first + 1, second),
    key: identity.slice(second + 1),
  };
}

/** Compiles the configuration's filters once (module scope in the Lambda), then routes objects. */
export class Router {
  private readonly ignore: (key: string) => boolean;
  private readonly tables: ReadonlyArray<{ config: TableConfig; glob?: (key: string) => boolean }>;

  constructor(config: PipelineConfig) {
    this.ignore = config.ignoreGlobs.length > 0 ? picomatch(config.ignoreGlobs, { dot: true }) : () => false;
    this.tables = config.tables.map((table) =>
      table.glob ? { config: table, glob: picomatch(table.glob, { dot: true }) } : { config: table },
    );
  }

  route(object: ObjectRef): RouteResult {
    if (object.key.endsWith('/')) return { kind: 'skipped', reason: 'folder marker' };
    if (this.ignore(object.key)) return { kind: 'skipped', reason: 'temporary or hidden file (ignoreGlobs)' };
    const files: FileRef[] = [];
    for (const { config, glob } of this.tables) {
      // A backfill's record goes to its one table; a live event to every live table that matches.
      if (object.target !== undefined ? object.target !== config.name : !config.live) continue;
      if (config.bucket && config.bucket !== object.bucket) continue;
      if (!object.key.startsWith(config.prefix)) continue;
      if (config.suffix && !object.key.endsWith(config.suffix)) continue;
      if (glob && !glob(object.key)) continue;
      const { target: _, ...ref } = object;
      files.push({ ...ref, table: config.name, identity: fileIdentity(config, object) });
    }
    if (files.length === 0) {
      // A table removed or renamed while its backfill records were queued: acknowledging them would lose
      // them silently, so they are quarantined where `inlet quarantine` shows them (and can be re-run).
      if (object.target !== undefined && !this.tables.some((t) => t.config.name === object.target))
        return {
          kind: 'unroutable',
          reason: `backfill record for table '${object.target}', which is not configured (removed or renamed?)`,
        };
      return { kind: 'skipped', reason: 'no table matches' };
    }
    return { kind: 'routed', files };
  }
}
