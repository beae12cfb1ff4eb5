import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { engineJarsFile, enginesCacheDir } from './paths.ts';
import { EmulatorSetupError } from './venv.ts';

/** The project-local Maven repository the engine jars are fetched into (kept between runs, in .gitignore). */
export const engineMavenRepo = join(enginesCacheDir, 'm2');

/** Pinned, so every machine resolves the same way (Debian's Maven 3.8 would pick a 2.x plugin). */
const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1';

export interface MavenCoordinate {
  readonly group: string;
  readonly artifact: string;
  readonly version: string;
}

/** `group:artifact:version` lines of test/engines/jars.txt; `#` comments and blank lines skipped. */
export function parseJarList(text: string): MavenCoordinate[] {
  return text
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim())
    .filter(Boolean)
    .map((line) => {
      const [group, artifact, version, ...rest] = line.split(':');
      if (!group || !artifact || !version || rest.length > 0)
        throw new EmulatorSetupError(`${engineJarsFile}: '${line}' is not group:artifact:version`);
      return { group, artifact, version };
    });
}

/** Where Maven puts a jar in its local repository layout. */
export function jarPath(repo: string, c: MavenCoordinate): string {
  return join(repo, ...c.group.split('.'), c.artifact, c.version, `${c.artifact}-${c.version}.jar`);
}

function requireTool(cmd: string, args: string[], what: string): string {
  const probe = spawnSync(cmd, args, { encoding: 'utf8' });
  if (probe.error || probe.status !== 0)
    throw new EmulatorSetupError(
      `${cmd} was not found or failed (${probe.error?.message ?? `exit ${probe.status}`}); ${what}`,
    );
  return `${probe.stdout}${probe.stderr}`;
}

/** Spark 4.0 runs on Java 17 or 21. */
function checkJava(): void {
  const out = requireTool(
    'java',
    ['-version'],
    'Spark 4.0 needs Java 17 or later on PATH (Debian: apt-get install openjdk-17-jre-headless).',
  );
  const major = Number(/version "(\d+)/.exec(out)?.[1] ?? 0);
  if (major < 17)
    throw new EmulatorSetupError(
      `Spark 4.0 needs Java 17 or later; java on PATH is ${major || 'unknown'}: ${out.split('\n')[0]}`,
    );
}

/**
 * Fetches the jars of test/engines/jars.txt that are not yet in `.cache/engines/m2`, one
 * `mvn dependency:get` each (checksums enforced), and returns every jar's path for `spark.jars`.
 */
export function ensureEngineJars(log: (line: string) => void = console.error): string[] {
  checkJava();
  const coordinates = parseJarList(readFileSync(engineJarsFile, 'utf8'));
  const missing = coordinates.filter((c) => !existsSync(jarPath(engineMavenRepo, c)));
  if (missing.length > 0) {
    requireTool('mvn', ['-v'], 'the engine jars are fetched with Maven (Debian: apt-get install maven).');
    log(`[inlet] fetching ${missing.length} engine jar(s) from Maven Central into ${engineMavenRepo} (once)`);
  }
  for (const c of missing) {
    const gav = `${c.group}:${c.artifact}:${c.version}`;
    const result = spawnSync(
      'mvn',
      [
        '--batch-mode',
        '--quiet',
        '--strict-checksums',
        '-Dstyle.color=never',
        `-Dmaven.repo.local=${engineMavenRepo}`,
        `${DEPENDENCY_PLUGIN}:get`,
        `-Dartifact=${gav}`,
        '-Dtransitive=false',
      ],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    );
    if (result.error || result.status !== 0 || !existsSync(jarPath(engineMavenRepo, c)))
      throw new EmulatorSetupError(
        `mvn dependency:get ${gav} failed (exit ${result.status ?? result.error?.message})`,
      );
  }
  return coordinates.map((c) => jarPath(engineMavenRepo, c));
}
