/**
 * Memory of another process as the kernel reports it (`/proc/<pid>/status`), so the harness can
 * measure processes it does not control, such as Mosquitto, and the peak of a child that crashed.
 */
import { readFileSync } from 'node:fs';

export interface KernelMemory {
  /** Resident set size now, KiB. */
  rssKiB: number;
  /** Peak resident set size ("high water mark"), KiB. */
  hwmKiB: number;
}

/** Parses the `VmRSS` and `VmHWM` lines of a `/proc/<pid>/status` text. Pure, for tests. */
export function parseProcStatus(text: string): KernelMemory | undefined {
  const field = (name: string): number | undefined => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(text);
    return match ? Number(match[1]) : undefined;
  };
  const rssKiB = field('VmRSS');
  const hwmKiB = field('VmHWM');
  return rssKiB === undefined || hwmKiB === undefined ? undefined : { rssKiB, hwmKiB };
}

/** The memory of `pid`, or undefined when it is gone or this is not Linux. */
export function readKernelMemory(pid: number): KernelMemory | undefined {
  try {
    return parseProcStatus(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Kernel clock ticks per second for `/proc/<pid>/stat` times (`getconf CLK_TCK`; 100 on Linux/x86 and arm64). */
const CLOCK_TICKS_PER_SECOND = 100;

/**
 * CPU seconds (user + system) `pid` has used, from the `utime` and `stime` fields of
 * `/proc/<pid>/stat` (proc(5), fields 14 and 15), or undefined when it is gone or this is not Linux.
 */
export function readCpuSeconds(pid: number): number | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may contain spaces; count fields after it.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return Number.isFinite(utime) && Number.isFinite(stime) ? (utime + stime) / CLOCK_TICKS_PER_SECOND : undefined;
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds the whole machine has spent busy (all cores, everything but idle and iowait), from
 * the first line of `/proc/stat` (proc(5)), or undefined off Linux. Compared with what the
 * measured processes used, it shows how much other work shared the machine during a measurement.
 */
export function readMachineBusySeconds(): number | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    const busy = [user, nice, system, irq, softirq, steal].reduce<number>((sum, value) => sum + (value ?? 0), 0);
    return busy / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}
