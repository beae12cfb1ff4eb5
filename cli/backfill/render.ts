import { SingleBar } from 'cli-progress';
import { type Backfills, lastSegment, type RunView } from './run-view.ts';

// How a run looks at the terminal: one summary block, and a progress bar while waiting (stderr, TTY only).

export function print(view: RunView, json: boolean): void {
  if (json) {
    console.log(JSON.stringify(view, null, 2));
    return;
  }
  const s = view.summary;
  console.log(`${lastSegment(view.execution)}: ${view.status}`);
  if (s) {
    console.log(
      `  ${s.dryRun ? 'dry run, ' : ''}listed ${s.listed}, matched ${s.matched}, ${
        s.dryRun ? `would enqueue ${s.wouldEnqueue}` : `enqueued ${s.enqueued}`
      }, already ingested ${s.alreadyIngested}; executions ${view.executions.length}; last key ${s.lastKey ?? '-'}`,
    );
  }
  if (view.error) console.log(`  ${view.error}: ${view.cause ?? ''}`);
  if (view.resume) console.log(`  resume: ${view.resume}`);
}

export async function waitFor(service: Backfills, execution: string, json: boolean, maxObjects?: number) {
  const tty = process.stderr.isTTY && !json;
  const bar = tty
    ? new SingleBar({
        format:
          'backfill |{bar}| listed {value} · matched {matched} · enqueued {enqueued} · already {already} · {state}',
        hideCursor: true,
      })
    : undefined;
  bar?.start(maxObjects ?? 1000, 0, { matched: 0, enqueued: 0, already: 0, state: 'RUNNING' });
  let view = await service.view(execution);
  while (view.status === 'RUNNING') {
    const s = view.summary;
    if (s && bar) {
      // The total is unknown until the listing ends: it stays one page ahead of what was listed.
      bar.setTotal(maxObjects ?? (s.complete ? s.listed : s.listed + 1000));
      bar.update(s.listed, {
        matched: s.matched,
        enqueued: s.dryRun ? s.wouldEnqueue : s.enqueued,
        already: s.alreadyIngested,
        state: `execution ${view.executions.length}`,
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    view = await service.view(execution);
  }
  if (bar) {
    const s = view.summary;
    if (s) bar.setTotal(s.listed);
    bar.update(s?.listed ?? 0, {
      matched: s?.matched ?? 0,
      enqueued: (s?.dryRun ? s?.wouldEnqueue : s?.enqueued) ?? 0,
      already: s?.alreadyIngested ?? 0,
      state: view.status,
    });
    bar.stop();
  }
  return view;
}
