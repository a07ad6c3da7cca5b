/**
 * Runs ffmpeg as a child process (never on the event loop). The binary comes from
 * @ffmpeg-installer/ffmpeg (a static build shipped inside the npm package); FFMPEG_PATH
 * overrides it with a system ffmpeg.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { MediaError } from '../types.js';

const require = createRequire(import.meta.url);

let resolvedPath: string | undefined;

export function ffmpegPath(): string {
  if (process.env.FFMPEG_PATH) return process.env.FFMPEG_PATH;
  resolvedPath ??= (require('@ffmpeg-installer/ffmpeg') as { path: string }).path;
  return resolvedPath;
}

export interface FfmpegOptions {
  signal?: AbortSignal;
  /** Bytes of stdout kept at most; more fails the run (guards against decompression bombs). */
  maxOutputBytes?: number;
  /** Bytes written to stdin, e.g. raw samples to encode. */
  stdin?: Uint8Array;
}

export interface FfmpegRun {
  stdout: Buffer;
  stderr: string;
}

/**
 * Runs `ffmpeg -hide_banner -nostdin <args>` and resolves with its stdout. A non-zero exit
 * rejects with a MediaError carrying ffmpeg's last error lines, because in practice that
 * means the input could not be decoded.
 */
export function runFfmpeg(args: string[], options: FfmpegOptions = {}): Promise<FfmpegRun> {
  const maxOutputBytes = options.maxOutputBytes ?? 512 * 1024 * 1024;
  const fullArgs = ['-hide_banner', ...(options.stdin ? [] : ['-nostdin']), ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(ffmpegPath(), fullArgs, {
      stdio: [options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      signal: options.signal,
      killSignal: 'SIGKILL',
    });
    const chunks: Buffer[] = [];
    let outputBytes = 0;
    let stderr = '';
    let overflow = false;
    child.stdout!.on('data', (chunk: Buffer) => {
      outputBytes += chunk.length;
      if (outputBytes > maxOutputBytes) {
        overflow = true;
        child.kill('SIGKILL');
        return;
      }
      chunks.push(chunk);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      // Keep only the tail: ffmpeg can be very chatty on long inputs.
      stderr = (stderr + chunk.toString('utf8')).slice(-16_384);
    });
    if (options.stdin) {
      child.stdin!.on('error', () => {}); // ffmpeg may close stdin early on bad input
      child.stdin!.end(options.stdin);
    }
    child.on('error', (error) => reject(error));
    child.on('close', (code) => {
      if (overflow) return reject(new MediaError(`decoded output exceeds ${maxOutputBytes} bytes`));
      if (code !== 0) {
        const reason = withoutPaths(stderr.trim().split('\n').slice(-3).join(' | ')) || `exit code ${code}`;
        return reject(new MediaError(`ffmpeg could not process the media: ${reason}`));
      }
      resolve({ stdout: Buffer.concat(chunks), stderr });
    });
  });
}

/** ffmpeg names its files by absolute path; a job's error message shows only their base names. */
export function withoutPaths(text: string): string {
  return text.replace(/(?:\/[^\s/:'"|]+)+\/([^\s/:'"|]+)/g, '$1');
}

export interface StreamInfo {
  durationSeconds: number | null;
  video: { codec: string; width: number; height: number; fps: number | null } | null;
  audio: { codec: string; sampleRate: number; channels: number } | null;
}

/** Channels of ffmpeg's named layouts that are not written as counts. */
const NAMED_LAYOUTS: Record<string, number> = { mono: 1, stereo: 2, downmix: 2, quad: 4, hexagonal: 6, octagonal: 8, cube: 8, hexadecagonal: 16 };

/**
 * The channel count of the layout ffmpeg prints for an audio stream: "6 channels" when it has
 * no name, otherwise a name ("stereo", "quad") or speaker groups ("5.1" is five full-range
 * speakers and one LFE, six channels; "7.1.4" twelve), each with an optional variant ("5.1(side)").
 * Two channels when it cannot be read, the mix every decoder can give.
 */
export function channelCount(layout: string): number {
  const counted = /^(\d+) channels?/.exec(layout);
  if (counted) return Number(counted[1]);
  const name = layout.trim().replace(/\(.*$/, '');
  if (/^\d+(\.\d+)+$/.test(name)) return name.split('.').reduce((sum, part) => sum + Number(part), 0);
  return NAMED_LAYOUTS[name] ?? 2;
}

/**
 * Reads duration and stream facts from ffmpeg's own stream report (the shipped static
 * build has no ffprobe). Rejects with a MediaError when ffmpeg cannot open the input.
 */
export async function probeMedia(path: string, signal?: AbortSignal): Promise<StreamInfo> {
  // `-f null -t 0` opens the input and prints the report without decoding anything.
  const { stderr } = await runFfmpeg(['-i', path, '-t', '0', '-f', 'null', '-'], { signal });
  const duration = /Duration: (\d+):(\d+):(\d+(?:\.\d+)?)/.exec(stderr);
  const video = /Stream #\S+.*?: Video: (\w+)[^\n]*?, (\d{2,5})x(\d{2,5})[^\n]*?(?:, ([\d.]+) fps)?/.exec(stderr);
  const audio = /Stream #\S+.*?: Audio: (\w+)[^\n]*?, (\d+) Hz, ([^,\n]+)/.exec(stderr);
  return {
    durationSeconds: duration ? Number(duration[1]) * 3600 + Number(duration[2]) * 60 + Number(duration[3]) : null,
    video: video
      ? { codec: video[1]!, width: Number(video[2]), height: Number(video[3]), fps: video[4] ? Number(video[4]) : null }
      : null,
    audio: audio ? { codec: audio[1]!, sampleRate: Number(audio[2]), channels: channelCount(audio[3]!) } : null,
  };
}

/** The first video stream's packets as the container lists them (no decoding): presentation times and keyframe flags. */
export interface VideoPackets {
  /** Seconds per unit of `pts`. */
  timeBase: number;
  packets: Array<{ pts: number; keyframe: boolean }>;
}

/**
 * The packets of the first `seconds` of a file's first video stream, read by stream copy to
 * ffmpeg's framecrc listing (a keyframe's line carries no flags field, others `F=0x0`). Null
 * when the listing has no time base (no video stream).
 */
export async function videoPackets(path: string, seconds: number, signal: AbortSignal): Promise<VideoPackets | null> {
  const { stdout } = await runFfmpeg(['-t', String(seconds), '-i', path, '-map', '0:v:0', '-c', 'copy', '-f', 'framecrc', 'pipe:1'], { signal, maxOutputBytes: 16 * 1024 * 1024 });
  const text = stdout.toString('utf8');
  const timebase = /#tb 0: (\d+)\/(\d+)/.exec(text);
  if (!timebase) return null;
  const packets = text
    .split('\n')
    .filter((line) => /^0,/.test(line))
    .map((line) => {
      const flags = /, F=0x([0-9a-f]+)/i.exec(line);
      return { pts: Number(line.split(',')[2]), keyframe: !flags || (Number.parseInt(flags[1]!, 16) & 1) === 1 };
    })
    .filter((packet) => Number.isFinite(packet.pts));
  return { timeBase: Number(timebase[1]) / Number(timebase[2]), packets };
}
