import { describe, expect, it } from 'vitest';
import { parsePipelineConfig } from '../../../shared/config/pipeline-config.ts';
import type { ObjectRef } from '../../../shared/ingestion/model.ts';
import { fileIdentity, parseIdentity, Router } from '../../../shared/ingestion/routing.ts';
import { ConfigError } from '../../../shared/kernel/errors.ts';

const object = (key: string, extra: Partial<ObjectRef> = {}): ObjectRef => ({
  bucket: 'landing',
  key,
  size: 1,
  eTag: 'e1',
  versionId: null,
  sequencer: null,
  eventTime: '2026-11-29T12:00:00.000Z',
  ...extra,
});

const config = parsePipelineConfig({
  tables: [
    { name: 'orders', prefix: 'orders/', suffix: '.json' },
    { name: 'all_json', prefix: '', glob: '**/*.json' },
    { name: 'eu', prefix: 'orders/', bucket: 'eu-landing' },
  ],
});

describe('Router', () => {
  const router = new Router(config);

  it('routes a file to every table whose filters match, once per table', () => {
    const routed = router.route(object('orders/2026/a.json'));
    expect(routed.kind === 'routed' && routed.files.map((f) => f.table)).toEqual(['orders', 'all_json']);
  });

  it('honours bucket, suffix and glob filters', () => {
    expect(router.route(object('orders/a.csv'))).toEqual({ kind: 'skipped', reason: 'no table matches' });
    const eu = router.route(object('orders/a.csv', { bucket: 'eu-landing' }));
    expect(eu.kind === 'routed' && eu.files.map((f) => f.table)).toEqual(['eu']);
  });

  it.each([
    ['orders/2026/', 'folder marker'],
    ['orders/_temporary/0/part.json', 'temporary or hidden file (ignoreGlobs)'],
    ['_temporary/x.json', 'temporary or hidden file (ignoreGlobs)'],
    ['orders/part-0.json.tmp', 'temporary or hidden file (ignoreGlobs)'],
    ['orders/.hidden.json', 'temporary or hidden file (ignoreGlobs)'],
  ])('skips %s (%s)', (key, reason) => {
    expect(router.route(object(key))).toEqual({ kind: 'skipped', reason });
  });
});

describe('fileIdentity', () => {
  const plain = { name: 't', prefix: '', allowOverwrites: false };
  const overwrites = { ...plain, allowOverwrites: true };

  it('is the path by default, so a rewritten object is the same file', () => {
    expect(fileIdentity(plain, object('a#b.json', { eTag: 'e1' }))).toBe(
      fileIdentity(plain, object('a#b.json', { eTag: 'e2' })),
    );
  });

  it('with allowOverwrites uses the versionId, else the eTag', () => {
    expect(fileIdentity(overwrites, object('k', { versionId: 'v1' }))).toBe('landing#v:v1#k');
    expect(fileIdentity(overwrites, object('k', { eTag: 'e2' }))).toBe('landing#e:e2#k');
  });

  it('parses back whatever the key contains', () => {
    const key = 'a#b/#v:x/ü +%.json';
    expect(parseIdentity(fileIdentity(overwrites, object(key, { versionId: 'v1' })))).toEqual({
      bucket: 'landing',
      tag: 'v:v1',
      key,
    });
  });
});

describe('parsePipelineConfig', () => {
  it('applies defaults', () => {
    const parsed = parsePipelineConfig({ tables: [{ name: 'orders' }] });
    expect(parsed.tables[0]).toEqual({ name: 'orders', prefix: '', allowOverwrites: false, live: true });
    expect(parsed.ignoreGlobs).toEqual(['**/_temporary/**', '**/*.tmp', '**/.*']);
    // The functions' schema and the construct use one default (they disagreed: 900 s against 600 s).
    expect(parsed.leaseSeconds).toBe(600);
  });

  it('lists every problem at once', () => {
    const error = (() => {
      try {
        parsePipelineConfig({
          tables: [{ name: 'Bad Name' }, { name: 'ok' }, { name: 'ok' }],
          leaseSeconds: -1,
        });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      expect.stringMatching(/^tables\.0\.name: table names are/),
      expect.stringMatching(/^leaseSeconds: /),
    ]);
    expect(() => parsePipelineConfig({ tables: [{ name: 'ok' }, { name: 'ok' }] })).toThrow(
      /duplicate table name 'ok'/,
    );
  });
});
