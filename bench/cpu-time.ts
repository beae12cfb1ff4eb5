// CPU seconds a benchmark costs, counted where they are spent: this process, the processes it started and
// waited for (CLIs, delta-rs, `npm start`), and the emulator. Wall time on a shared machine depends on the
// load; CPU time hardly does, so `--quick`'s budget is checked against both.
import { readFileSync } from 'node:fs';

/** Linux's clock ticks per second for /proc times (`getconf CLK_TCK`): 100 on every kernel Node runs on. */
const TICKS_PER_SECOND = 100;

/** utime + stime (+ cutime + cstime with `children`) of a process, in seconds; 0 where /proc is absent. */
function procSeconds(pid: number | 'self', children: boolean): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which may hold spaces: state is field 3, utime field 14.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const at = (field: number) => Number(fields[field - 3] ?? 0);
    const ticks = at(14) + at(15) + (children ? at(16) + at(17) : 0);
    return ticks / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** CPU seconds so far of this process, its waited-for children, and the emulator (`emulatorPid`). */
export function cpuSecondsSoFar(emulatorPid: number): number {
  return procSeconds('self', true) + (emulatorPid > 0 ? procSeconds(emulatorPid, true) : 0);
}
