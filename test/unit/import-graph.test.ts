import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../shared/kernel/project-root.ts';

// Dependencies point one way: product code never reaches into the tools built around it, and
// the CLI and local runner never load CDK at run time (it costs seconds per command). A regex over import
// statements is enough here: the code base uses only `import ... from '...'`, `export ... from '...'` and
// `import('...')`, and this test fails on a specifier it cannot resolve rather than skipping it.

const PRODUCT = ['shared', 'functions', 'infra'];
const TOOLS = ['local', 'cli', 'bench', 'test'];
const CDK_PACKAGES = ['aws-cdk-lib', 'constructs', 'cdk-nag', 'aws-cdk'];
/** The synth/deploy path of `npm start`: needs CDK, so it is only ever loaded with a dynamic import. */
const SYNTH_PATH = 'local/synth.ts';
/** Loaded by the synth path only (it wraps the CDK's bundling step). */
const SYNTH_ONLY = ['local/bundle-cache.ts'];
/** The composition roots: each function's wiring, the only product code that builds adapters. */
const RUNTIME = 'shared/runtime/';
const isRuntime = (path: string) => path.startsWith(RUNTIME);
/** AWS adapters live in the `aws/` folder of their feature (shared/bronze/aws/, shared/kernel/aws/, ...). */
const isAdapter = (path: string) => path.startsWith('shared/') && path.split('/').includes('aws');
const isHandler = (path: string) => path.startsWith('shared/') && path.endsWith('-handler.ts');
/** What builds a function's handler in-process: local mode runs the functions' bundles instead. */
const HANDLER_BUILDERS = (path: string) => isHandler(path) || isRuntime(path);

interface Edge {
  readonly from: string;
  readonly to: string;
  /** Erased at compile time (`import type`, `export type`): never loaded. */
  readonly typeOnly: boolean;
  /** `import('...')`: loaded only when that code path runs. */
  readonly dynamic: boolean;
}

function tsFiles(dir: string): string[] {
  const root = join(projectRoot, dir);
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(ts|mts|mjs)$/.test(e.name) && !e.parentPath.includes('node_modules'))
    .map((e) => relative(projectRoot, join(e.parentPath, e.name)));
}

const STATIC = /^\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Relative specifiers become project paths; packages keep their name (scope and first segment). */
function target(from: string, specifier: string): string {
  if (!specifier.startsWith('.')) {
    const parts = specifier.split('/');
    return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
  }
  const path = relative(projectRoot, resolve(projectRoot, dirname(from), specifier));
  if (!existsSync(join(projectRoot, path))) throw new Error(`${from}: cannot resolve ${specifier}`);
  return path;
}

function edges(file: string): Edge[] {
  const source = readFileSync(join(projectRoot, file), 'utf8');
  const found: Edge[] = [];
  for (const m of source.matchAll(STATIC)) {
    const specifier = m[3] ?? '';
    // Only `import type` / `export type` is erased: under verbatimModuleSyntax `import { type A } from 'm'`
    // still loads m (it compiles to `import {} from 'm'`), so it counts as a run-time edge.
    found.push({
      from: file,
      to: target(file, specifier),
      typeOnly: Boolean(m[2]),
      dynamic: false,
    });
  }
  for (const m of source.matchAll(DYNAMIC))
    found.push({ from: file, to: target(file, m[1] ?? ''), typeOnly: false, dynamic: true });
  return found;
}

const layer = (path: string) => path.split('/')[0] ?? '';

/** Every module `file` loads when it is imported: static, non-type imports, followed transitively. */
function staticClosure(file: string): Map<string, string[]> {
  const chains = new Map<string, string[]>([[file, [file]]]);
  const queue = [file];
  while (queue.length > 0) {
    const current = queue.shift() ?? '';
    if (!/\.(ts|mts|mjs)$/.test(current)) continue;
    for (const edge of edges(current)) {
      if (edge.typeOnly || edge.dynamic || chains.has(edge.to)) continue;
      chains.set(edge.to, [...(chains.get(current) ?? []), edge.to]);
      queue.push(edge.to);
    }
  }
  return chains;
}

describe('the import graph', () => {
  it('product code (shared/, functions/, infra/) never imports local/, cli/, bench/ or test/', () => {
    const wrongWay = PRODUCT.flatMap(tsFiles)
      .flatMap(edges)
      .filter((e) => TOOLS.includes(layer(e.to)))
      .map((e) => `${e.from} -> ${e.to}`);
    expect(wrongWay).toEqual([]);
  });

  it('nothing the CLI or the local runner loads at run time reaches infra/ or CDK, except the synth path', () => {
    const entries = ['cli', 'local']
      .flatMap(tsFiles)
      .filter((f) => f !== SYNTH_PATH && !SYNTH_ONLY.includes(f));
    const reached = new Set<string>();
    for (const entry of entries) {
      for (const [module, chain] of staticClosure(entry)) {
        if (layer(module) === 'infra' || CDK_PACKAGES.includes(module) || module === SYNTH_PATH)
          reached.add(chain.join(' -> '));
      }
    }
    expect([...reached]).toEqual([]);
  });

  it('local mode builds no handler: local/ loads no handler factory or function runtime (it runs the bundles)', () => {
    const built = new Set<string>();
    for (const entry of tsFiles('local'))
      for (const [module, chain] of staticClosure(entry))
        if (HANDLER_BUILDERS(module)) built.add(chain.join(' -> '));
    expect([...built]).toEqual([]);
  });

  it('the synth path is loaded only by a dynamic import', () => {
    const importers = tsFiles('cli')
      .concat(tsFiles('local'))
      .flatMap(edges)
      .filter((e) => e.to === SYNTH_PATH);
    expect(importers.filter((e) => !e.dynamic && !e.typeOnly).map((e) => e.from)).toEqual([]);
    expect(importers.some((e) => e.dynamic)).toBe(true);
  });

  it('shared/kernel/names.ts loads nothing but the metric names (which import nothing): any layer reads a name for free', () => {
    expect([...staticClosure('shared/kernel/names.ts').keys()].sort()).toEqual([
      'shared/kernel/metrics.ts',
      'shared/kernel/names.ts',
    ]);
  });

  it('kernel/ imports no feature folder: what every feature uses depends on none of them', () => {
    const reached = tsFiles('shared/kernel')
      .flatMap(edges)
      .filter((e) => e.to.startsWith('shared/') && !e.to.startsWith('shared/kernel/'))
      .map((e) => `${e.from} -> ${e.to}`);
    expect(reached).toEqual([]);
  });

  it('the features name the pipeline configuration (shared/config/) by its types only: it composes them, not they it', () => {
    const loaded = tsFiles('shared')
      .filter((f) => !f.startsWith('shared/config/') && !isRuntime(f))
      .flatMap(edges)
      .filter((e) => e.to.startsWith('shared/config/') && !e.typeOnly)
      .map((e) => `${e.from} -> ${e.to}`);
    expect(loaded).toEqual([]);
  });

  it('only the AWS adapters (shared/*/aws/) and the composition roots (shared/runtime/) import the AWS SDK', () => {
    const sdk = PRODUCT.flatMap(tsFiles)
      .flatMap(edges)
      .filter((e) => e.to.startsWith('@aws-sdk/') && !isAdapter(e.from) && !isRuntime(e.from))
      .map((e) => `${e.from} -> ${e.to}`);
    expect(sdk).toEqual([]);
  });

  it('domain code, ports, use cases and handlers never import an adapter: only adapters and the composition roots do', () => {
    const reached = PRODUCT.flatMap(tsFiles)
      .flatMap(edges)
      .filter((e) => isAdapter(e.to) && !isAdapter(e.from) && !isRuntime(e.from))
      .map((e) => `${e.from} -> ${e.to}`);
    expect(reached).toEqual([]);
  });

  it('a function goes through its runtime: it imports a composition root, handler factories and kernel names, nothing it could wire itself', () => {
    const functions = tsFiles('functions');
    expect(functions.length).toBeGreaterThan(0);
    const other = functions
      .flatMap(edges)
      .filter((e) => !isRuntime(e.to) && !isHandler(e.to) && !e.to.startsWith('shared/kernel/'))
      .map((e) => `${e.from} -> ${e.to}`);
    expect(other).toEqual([]);
    expect(functions.filter((f) => !edges(f).some((e) => isRuntime(e.to)))).toEqual([]);
  });

  it('only the functions load a composition root', () => {
    const loaders = PRODUCT.flatMap(tsFiles)
      .flatMap(edges)
      .filter((e) => isRuntime(e.to) && !isRuntime(e.from) && layer(e.from) !== 'functions')
      .map((e) => `${e.from} -> ${e.to}`);
    expect(loaders).toEqual([]);
  });

  it('sees a wrong-way import when there is one (the check itself works)', () => {
    // A composition root builds SDK clients and adapters: real edges the layout rules must recognise.
    const wiring = edges('shared/runtime/ledger-runtime.ts').map((e) => e.to);
    expect(wiring.some((to) => to.startsWith('@aws-sdk/'))).toBe(true);
    expect(wiring.filter(isAdapter)).toContain('shared/ingestion/aws/dynamodb-ledger.ts');
    // infra/functions.ts builds Lambda entries from the project root: a real edge to shared/.
    expect(edges('infra/functions.ts').map((e) => e.to)).toContain('shared/kernel/project-root.ts');
    expect([...staticClosure('local/synth.ts').keys()]).toContain('aws-cdk-lib');
  });
});
