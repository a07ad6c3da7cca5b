/**
 * What every benchmark measures the same way: its command-line options, CPU seconds (from
 * /proc, so ffmpeg children and other processes count) and resident memory.
 */
import { readFileSync } from 'node:fs';

/** `--name value` from the command line as a number, or the fallback. */
export function numberOption(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? Number(process.argv[index + 1]) : fallback;
}

/** `--name value` from the command line as a string, or the fallback. */
export function stringOption(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? process.argv[index + 1]! : fallback;
}

/** Fields of /proc/<pid>/stat after the command name (which may hold spaces). */
function statFields(pid: number | 'self'): string[] {
  return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
}

// USER_HZ is 100 on Linux: /proc reports CPU time in hundredths of a second.
const TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) another process has used so far. */
export function processCpuSeconds(pid: number): number {
  const fields = statFields(pid);
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** CPU seconds of this process (all its threads) and of its finished children (ffmpeg). */
export function cpuSecondsWithChildren(): number {
  const fields = statFields('self');
  const self = process.cpuUsage();
  return (self.user + self.system) / 1e6 + (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND;
}

/** Resident memory of a process in MiB: now (VmRSS) or its peak (VmHWM). */
export function rssMiB(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((entry) => entry.startsWith(field));
  return Math.round(Number(line?.match(/(\d+)/)?.[1] ?? 0) / 1024);
}

/** Peak resident memory of this process in MiB. */
export function peakRssMiB(): number {
  return Math.round(process.resourceUsage().maxRSS / 1024);
}

export interface Timing<T> {
  /** Fastest wall time of the runs, in seconds: the least disturbed by a noisy machine. */
  bestWallSeconds: number;
  /** Mean CPU seconds per run, this process and its children. */
  cpuSecondsPerRun: number;
  /** What the last run returned. */
  result: T;
}

/** Runs `action` `runs` times, one after another. */
export async function timeRuns<T>(runs: number, action: () => Promise<T>): Promise<Timing<T>> {
  const wall: number[] = [];
  let cpu = 0;
  let result: T | undefined;
  for (let run = 0; run < runs; run++) {
    const cpuStart = cpuSecondsWithChildren();
    const start = performance.now();
    result = await action();
    wall.push((performance.now() - start) / 1000);
    cpu += cpuSecondsWithChildren() - cpuStart;
  }
  return { bestWallSeconds: Math.min(...wall), cpuSecondsPerRun: cpu / runs, result: result as T };
}
