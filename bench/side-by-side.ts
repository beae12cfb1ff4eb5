// `npx tsx bench/side-by-side.ts [results.json]`: writes docs/performance.md's side-by-side tables from a
// run's results (bench/results.json by default), between their `<!-- ...:begin/end -->` markers, so the doc
// holds one run's figures as the run wrote them. `--print` prints them instead.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../local/paths.ts';
import {
  bothModesTable,
  peersTable,
  provenance,
  replaceBlock,
  SideBySideResults,
} from './side-by-side-table.ts';

const print = process.argv.includes('--print');
const source =
  process.argv.slice(2).find((a) => !a.startsWith('--')) ?? join(projectRoot, 'bench', 'results.json');
const results = SideBySideResults.parse(JSON.parse(readFileSync(source, 'utf8')));
const blocks = {
  'side-by-side': `${provenance(results)}\n\n${peersTable(results)}`,
  'both-modes': bothModesTable(results),
};
if (print) {
  for (const content of Object.values(blocks)) console.log(`${content}\n`);
} else {
  const path = join(projectRoot, 'docs', 'performance.md');
  let doc = readFileSync(path, 'utf8');
  for (const [name, content] of Object.entries(blocks)) doc = replaceBlock(doc, name, content);
  writeFileSync(path, doc);
  console.log(`docs/performance.md: ${Object.keys(blocks).join(', ')} written from ${source}`);
}
