// What local mode installs into the project (the emulator's venv, the Lambda runtime's pieces) is made once
// and remade only when what it is made from changes: each install leaves a stamp (a hash of its inputs), and
// two processes installing the same piece at once (two test runs, `npm start` beside `npm test`) take turns.
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export interface InstalledPiece {
  /** The folder the install (re)makes; its lock is beside it (`<dir>.lock`). */
  readonly dir: string;
  /** The file whose presence says the piece is there (a binary, the venv's python). */
  readonly file: string;
  /** Where the stamp is kept (inside `dir`: a remade folder has none until the install succeeds). */
  readonly stampFile: string;
  /** What the piece is made from, hashed: a different stamp means a reinstall. */
  readonly stamp: string;
}

/** The piece is there and was made from what it is made from now. */
export function isInstalled(piece: InstalledPiece): boolean {
  return (
    existsSync(piece.file) &&
    existsSync(piece.stampFile) &&
    readFileSync(piece.stampFile, 'utf8').trim() === piece.stamp
  );
}

/**
 * Installs a piece unless it is installed, under an atomic mkdir lock beside its folder; the stamp is written
 * only once `install` has succeeded, so an interrupted install is redone. A lock older than `staleMs` was left
 * by a process that died during an install.
 */
export async function installOnce(
  piece: InstalledPiece,
  install: () => Promise<void> | void,
  staleMs: number,
): Promise<void> {
  if (isInstalled(piece)) return;
  const lock = `${piece.dir}.lock`;
  mkdirSync(dirname(lock), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (Date.now() - statSync(lock).mtimeMs > staleMs) rmSync(lock, { recursive: true, force: true });
      await sleep(500);
    }
  }
  try {
    if (isInstalled(piece)) return;
    await install();
    writeFileSync(piece.stampFile, `${piece.stamp}\n`);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
