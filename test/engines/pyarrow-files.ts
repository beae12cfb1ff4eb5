/**
 * Parquet landing files written by pyarrow, a writer Inlet did not write: the fixtures of
 * test/integration/bronze-values.test.ts (`bronze_fixtures.py`: every type the sink maps, nested types,
 * edge values, and what no Delta type holds), made once per run with the project venv's pyarrow, so the
 * engines read the same files delta-rs is checked against there.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { enginesCacheDir, venvPython } from '../../local/paths.ts';

const generator = fileURLToPath(new URL('../integration/bronze_fixtures.py', import.meta.url));
let written: string | undefined;

/** The bytes of one of the generator's files, `basic.parquet`..., made when first landed. */
export function pyarrowFile(name: string): () => Uint8Array {
  return () => {
    if (!written) {
      // Under the run's scratch directory, which each run starts empty (engines.test.ts).
      const dir = join(enginesCacheDir, 'run', 'pyarrow');
      mkdirSync(dir, { recursive: true });
      execFileSync(venvPython, [generator, dir], { stdio: ['ignore', 'ignore', 'inherit'] });
      written = dir;
    }
    return new Uint8Array(readFileSync(join(written, name)));
  };
}
