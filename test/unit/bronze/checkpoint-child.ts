// Run by checkpoint-memory.test.ts in a Node process with a small heap: reads a table whose last
// checkpoint holds many files (`argv[2]`, a file), commits one more version and writes its checkpoint.
// Prints `ok <files in the new checkpoint>`; a heap that cannot hold the table kills the process.
import { readFileSync } from 'node:fs';
import { bytesObject } from '../../../shared/bronze/checkpoint.ts';
import type { DeltaStore } from '../../../shared/bronze/ports.ts';
import { writeCheckpoint } from '../../../shared/bronze/snapshot.ts';

const [, , checkpointPath, versionText, commitText] = process.argv;
const version = Number(versionText);
const log = new Map<string, Uint8Array>([
  [`${String(version).padStart(20, '0')}.checkpoint.parquet`, readFileSync(checkpointPath as string)],
  ['_last_checkpoint', Buffer.from(JSON.stringify({ version, size: 0 }))],
]);
const commits = new Map<number, string>([[version + 1, commitText as string]]);
const chunks: Uint8Array[] = [];
let written = 0;
const delta: DeltaStore = {
  putDataFile: async () => undefined,
  putCommitIfAbsent: async () => 'created',
  getCommit: async (v) => commits.get(v),
  listCommits: async (after) => [...commits.keys()].filter((v) => after === undefined || v > after),
  putLogFile: async (name, body) => void log.set(name, typeof body === 'string' ? Buffer.from(body) : body),
  getLogFile: async (name) => log.get(name),
  openLogFile: async (name) => {
    const bytes = log.get(name);
    return bytes && bytesObject(bytes);
  },
  // Only counted, not kept: the test is about what the writer holds, not what a store would.
  streamLogFile: () => ({
    write: async (chunk) => {
      written += chunk.byteLength;
      chunks.length = 0;
    },
    close: async () => undefined,
    abort: async () => undefined,
  }),
};
const last = await writeCheckpoint(delta, version + 1);
console.log(`ok ${last.numOfAddFiles} ${written}`);
