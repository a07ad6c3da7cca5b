/**
 * Samples still frames from a video with ffmpeg (a child process, never this thread's
 * event loop): evenly spaced timestamps, in one pass from the start where that decodes less
 * than a seek each, otherwise each by its own fast input seek (read again from earlier when the
 * seek decodes damaged pictures), upright, scaled so the longest side is at most VIDEO_MAX_SIDE.
 */
import { probeMedia, runFfmpeg, videoPackets, type FfmpegOptions, type FfmpegRun, type StreamInfo } from '../media/ffmpeg.js';
import { MediaError } from '../types.js';
import { decodeImage, type DecodedImage } from './image-input.js';

/** Longest video accepted for face analysis. */
export const MAX_VIDEO_SECONDS = 600;
export const DEFAULT_FRAMES = 12;
export const MAX_FRAMES = 48;
/** Frames are analysed at up to 1280 px: faces in video are rarely sharper than that. */
const VIDEO_MAX_SIDE = 1280;

export interface SampledFrame extends DecodedImage {
  timeSeconds: number;
}

export interface SampledVideo {
  durationSeconds: number;
  width: number;
  height: number;
  fps: number | null;
  frames: SampledFrame[];
  damagedSeeks: DamagedSeeks;
}

/** ffmpeg's decoders report the pictures they could not decode cleanly: failed slices, concealed macroblocks. */
const DECODE_DAMAGE = /error while decoding|concealing \d+|decode_slice_header error|non-existing PPS|Could not find ref/i;
/** A damaged seek is read again by decoding from this far before it (from the start in a short clip). */
export const REREAD_SECONDS = 30;

/**
 * Sampled times whose fast seek decoded damaged pictures: read again cleanly from earlier, left
 * out because they were damaged however they were read, or analysed damaged because no sampled
 * time decoded cleanly at all.
 */
export interface DamagedSeeks {
  readAgain: number;
  leftOut: number;
  analysedDamaged: number;
}

/** What a result says about damaged seeks, or nothing when every seek decoded cleanly. */
export function damagedSeeksReport(damaged: DamagedSeeks): { damagedSeeks: DamagedSeeks & { note: string } } | Record<string, never> {
  const total = damaged.readAgain + damaged.leftOut + damaged.analysedDamaged;
  if (!total) return {};
  const parts = [
    damaged.readAgain && `${damaged.readAgain} read again by decoding from up to ${REREAD_SECONDS} s earlier`,
    damaged.leftOut && `${damaged.leftOut} left out, damaged however they were read`,
    damaged.analysedDamaged && `${damaged.analysedDamaged} analysed as decoded, damage and all, because no sampled time decoded cleanly`,
  ].filter(Boolean);
  return { damagedSeeks: { ...damaged, note: `seeking into the video decoded damaged pictures at ${total} sampled time${total > 1 ? 's' : ''}: ${parts.join('; ')}` } };
}

/**
 * What ffmpeg wrote at a sampled time: `readAgain` when the fast seek was damaged and the read
 * from earlier was clean, `damaged` when its decoder reported damage however the time was read.
 */
export interface SeekOutput {
  output: Buffer;
  readAgain: boolean;
  damaged: boolean;
}

/** What a caller takes at each sampled time: `frames` consecutive frames through `filter`, as PNG or binary PPM. */
export interface FrameGrab {
  frames: number;
  filter: string;
  codec: 'png' | 'ppm';
  /** Bytes of output kept at most per time (guards against decompression bombs). */
  maxOutputBytes: number;
}

const grabArgs = (grab: FrameGrab, filter = grab.filter) => ['-frames:v', String(grab.frames), '-an', '-vf', filter, '-f', 'image2pipe', '-vcodec', grab.codec, 'pipe:1'];

/** Sampled times up to this far into a video are weighed for one pass from the start (listing their packets is cheap). */
export const ONE_PASS_MAX_SECONDS = 120;

/** `run`'s result, or null when ffmpeg could not decode the input (the caller falls back); an abort still throws. */
function orNullIfUndecodable<T>(run: Promise<T>, signal: AbortSignal): Promise<T | null> {
  return run.catch((error: unknown) => {
    if (error instanceof MediaError && !signal.aborted) return null;
    throw error;
  });
}

/**
 * Whether one pass from the start decodes no more of the video than a seek per time does: a
 * seek decodes from the keyframe before its time, the pass from the start to the last time.
 * The keyframes come from the container's packet flags; without them, seeks.
 */
async function onePassDecodesLess(path: string, times: number[], signal: AbortSignal): Promise<boolean> {
  const last = times.at(-1)!;
  if (last > ONE_PASS_MAX_SECONDS) return false;
  const listing = await orNullIfUndecodable(videoPackets(path, last + 1, signal), signal);
  if (!listing?.packets.length) return false;
  const origin = Math.min(...listing.packets.map((packet) => packet.pts));
  const keyframes = listing.packets.filter((packet) => packet.keyframe).map((packet) => (packet.pts - origin) * listing.timeBase);
  const bySeeks = times.reduce((sum, time) => sum + time - Math.max(0, ...keyframes.filter((keyframe) => keyframe <= time)), 0);
  return last <= bySeeks;
}

/**
 * The grab at each of `times` (ascending and evenly spaced; `fps` the stream's rate when known).
 * When one pass from the start decodes no more of the video than a seek per time (short clips,
 * clips with few keyframes), all times are read in that pass. Otherwise, or when that pass
 * reports damage or its frames cannot be told apart by time, each time is read by a fast input
 * seek, which starts decoding at the keyframe the container names; some files (clips cut by
 * stream copy whose later keyframes need parameter sets sent only at the start, broken open
 * GOPs) decode concealed garbage from there. Analysed, such a frame is evidence of nothing: a
 * face embedding of concealed macroblocks looks like another person. So a seek that reports
 * damage is read again by decoding from up to REREAD_SECONDS earlier: damaged times less than
 * that apart in one pass (one decode instead of one per time), each on its own when that pass is
 * damaged too; a time damaged however it is read is marked so (see preferClean). Null for a time
 * past the last decodable frame.
 */
export async function decodeAtTimes(path: string, times: number[], grab: FrameGrab, signal: AbortSignal, fps: number | null = null): Promise<Array<SeekOutput | null>> {
  // Times closer than the grab's frames (a very short clip) would share frames, which one pass cannot tell apart.
  const apart = times.length > 1 && (fps === null || times[1]! - times[0]! >= grab.frames / fps);
  if (apart && (await onePassDecodesLess(path, times, signal))) {
    const together = await readTogether(path, times, grab, signal, 0);
    if (together) return together.map((output) => ({ output, readAgain: false, damaged: false }));
  }
  const options = { signal, maxOutputBytes: grab.maxOutputBytes };
  const fast: Array<FfmpegRun | null> = [];
  for (const time of times) {
    signal.throwIfAborted();
    // -nostats: the progress lines would push the decoders' reports out of the kept stderr tail.
    // ffmpeg may also give up on such a keyframe; reading from earlier decides (and fails the job if it fails too).
    fast.push(await orNullIfUndecodable(runFfmpeg(['-nostats', '-ss', time.toFixed(3), '-i', path, ...grabArgs(grab)], options), signal));
  }
  const results = fast.map((run): SeekOutput | null => (run && run.stdout.length ? { output: run.stdout, readAgain: false, damaged: false } : null));
  const damaged = times.map((_, i) => i).filter((i) => !fast[i] || DECODE_DAMAGE.test(fast[i]!.stderr));
  for (const group of nearbyGroups(damaged, times)) {
    const groupTimes = group.map((i) => times[i]!);
    const together = group.length > 1 ? await readTogether(path, groupTimes, grab, signal, Math.max(0, groupTimes[0]! - REREAD_SECONDS)) : null;
    for (const [k, i] of group.entries()) {
      results[i] = together ? { output: together[k]!, readAgain: true, damaged: false } : await readAgain(path, times[i]!, grab, options, fast[i]?.stdout);
    }
  }
  return results;
}

/** Indices of damaged times split where the next is more than REREAD_SECONDS later. */
function nearbyGroups(indices: number[], times: number[]): number[][] {
  const groups: number[][] = [];
  for (const i of indices) {
    const last = groups.at(-1);
    if (last && times[i]! - times[last.at(-1)!]! <= REREAD_SECONDS) last.push(i);
    else groups.push([i]);
  }
  return groups;
}

/** One time decoded from up to REREAD_SECONDS before it; damaged when the decoder still reports damage. */
async function readAgain(path: string, time: number, grab: FrameGrab, options: FfmpegOptions, fastOutput: Buffer | undefined): Promise<SeekOutput | null> {
  const from = Math.max(0, time - REREAD_SECONDS);
  const again = await runFfmpeg(['-nostats', ...(from > 0 ? ['-ss', from.toFixed(3)] : []), '-i', path, '-ss', (time - from).toFixed(3), ...grabArgs(grab)], options);
  if (DECODE_DAMAGE.test(again.stderr)) {
    const output = again.stdout.length ? again.stdout : fastOutput;
    return output?.length ? { output, readAgain: false, damaged: true } : null;
  }
  if (!again.stdout.length) return null; // past the last decodable frame after all
  return { output: again.stdout, readAgain: true, damaged: false };
}

/**
 * Several times decoded in one pass from `from`: the select filter keeps, for each time, the
 * first frame at or after it (what an output seek keeps) and the frames after it that the grab
 * asks for. Null, so each time is read on its own, when the pass reports damage or fails, or
 * when its frames cannot be told apart by time (two times within one frame, a time past the
 * last frame).
 */
async function readTogether(path: string, times: number[], grab: FrameGrab, signal: AbortSignal, from: number): Promise<Buffer[] | null> {
  const firstAtOrAfter = times.map((time) => `gte(t,${(time - from).toFixed(3)})*(lt(prev_t,${(time - from).toFixed(3)})+isnan(prev_t))`).join('+');
  // With `frames` per time the selected count runs first, next, …: mid-run only the frame right after the last one selected.
  const select = grab.frames > 1 ? `if(mod(selected_n,${grab.frames}),eq(prev_selected_n,n-1),${firstAtOrAfter})` : firstAtOrAfter;
  // -vsync 0: the selected frames as they are, not padded back to the stream's rate.
  const args = ['-vsync', '0', ...grabArgs({ ...grab, frames: times.length * grab.frames }, `select='${select}',${grab.filter}`)];
  const run = await orNullIfUndecodable(
    runFfmpeg(['-nostats', ...(from > 0 ? ['-ss', from.toFixed(3)] : []), '-i', path, ...args], { signal, maxOutputBytes: grab.maxOutputBytes * times.length }),
    signal,
  );
  if (!run || DECODE_DAMAGE.test(run.stderr)) return null;
  const frames = grab.codec === 'png' ? splitPngs(run.stdout) : splitPpms(run.stdout);
  if (frames.length !== times.length * grab.frames) return null;
  // Each time's frames lie side by side in the output: a view of them, not a copy.
  const offset = (frame: Buffer) => frame.byteOffset - run.stdout.byteOffset;
  return times.map((_, k) => {
    const [first, last] = [frames[k * grab.frames]!, frames[(k + 1) * grab.frames - 1]!];
    return run.stdout.subarray(offset(first), offset(last) + last.length);
  });
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Concatenated PNG files split at each one's IEND chunk. */
export function splitPngs(bytes: Buffer): Buffer[] {
  const files: Buffer[] = [];
  let start = 0;
  while (start + PNG_SIGNATURE.length <= bytes.length && bytes.subarray(start, start + 8).equals(PNG_SIGNATURE)) {
    let offset = start + 8;
    let ended = false;
    while (!ended && offset + 12 <= bytes.length) {
      const length = bytes.readUInt32BE(offset);
      ended = bytes.toString('latin1', offset + 4, offset + 8) === 'IEND';
      offset += 12 + length;
    }
    if (!ended || offset > bytes.length) break;
    files.push(bytes.subarray(start, offset));
    start = offset;
  }
  return files;
}

/** Binary PPM's header (P6, maxval 255): its length is header[0].length. */
export const PPM_HEADER = /^P6\s+(\d+)\s+(\d+)\s+255\s/;

/** Concatenated binary PPMs split into one buffer each; a cut one at the end is dropped. */
export function splitPpms(bytes: Buffer): Buffer[] {
  const files: Buffer[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const header = PPM_HEADER.exec(bytes.subarray(offset, offset + 64).toString('latin1'));
    if (!header) break;
    const end = offset + header[0].length + Number(header[1]) * Number(header[2]) * 3;
    if (end > bytes.length) break;
    files.push(bytes.subarray(offset, end));
    offset = end;
  }
  return files;
}

/**
 * The sampled items to analyse: the clean ones, leaving out those damaged however they were
 * read, unless nothing decoded cleanly (a file damaged throughout, e.g. a flipped bit in its
 * only keyframe): then all of them as decoded, so its other evidence (provenance, the frames'
 * mostly intact pixels) is still read. `damagedSeeks` counts what happened either way.
 */
export function preferClean<T>(sampled: Array<{ item: T; seek: SeekOutput }>): { items: T[]; damagedSeeks: DamagedSeeks } {
  const clean = sampled.filter((s) => !s.seek.damaged);
  const hurt = sampled.length - clean.length;
  return {
    items: (clean.length ? clean : sampled).map((s) => s.item),
    damagedSeeks: { readAgain: sampled.filter((s) => s.seek.readAgain).length, leftOut: clean.length ? hurt : 0, analysedDamaged: clean.length ? 0 : hurt },
  };
}

/** A video's stream report; a file without video, without a readable duration or too long is refused saying which. */
export async function probeVideo(path: string, signal: AbortSignal): Promise<{ video: NonNullable<StreamInfo['video']>; durationSeconds: number }> {
  const info = await probeMedia(path, signal);
  if (!info.video) throw new MediaError(info.audio ? 'the file has an audio stream but no video stream' : 'the file has no video stream');
  const duration = info.durationSeconds;
  if (duration === null || !(duration > 0)) throw new MediaError('the video duration could not be read');
  if (duration > MAX_VIDEO_SECONDS) throw new MediaError(`the video lasts ${Math.round(duration)} s; at most ${MAX_VIDEO_SECONDS} s are accepted`);
  return { video: info.video, durationSeconds: duration };
}

/**
 * `grab` at the centres of `count` equal slices of the video (the first and last frames are
 * often fades or black leaders). When every time lands past the last decodable frame (a
 * one-frame video, a still sent as a clip), once from the start; nothing at all is an error.
 */
export async function atSliceCentres<T>(count: number, durationSeconds: number, grab: (times: number[]) => Promise<Array<T | null>>): Promise<T[]> {
  const times = Array.from({ length: count }, (_, i) => ((i + 0.5) / count) * durationSeconds);
  let grabbed = (await grab(times)).filter((item): item is T => item !== null);
  if (grabbed.length === 0) grabbed = (await grab([0])).filter((item): item is T => item !== null);
  if (grabbed.length === 0) throw new MediaError('no frame of the video could be decoded');
  return grabbed;
}

export async function sampleFrames(path: string, frameCount: number, signal: AbortSignal): Promise<SampledVideo> {
  const { video, durationSeconds: duration } = await probeVideo(path, signal);
  const { width, height } = video;
  // PNG rather than raw pixels: ffmpeg applies the stream's rotation (phone videos are
  // often stored sideways) and the frame's real size travels with it.
  const grab: FrameGrab = { frames: 1, filter: `scale=w='min(${VIDEO_MAX_SIDE},iw)':h='min(${VIDEO_MAX_SIDE},ih)':force_original_aspect_ratio=decrease`, codec: 'png', maxOutputBytes: 64 * 1024 * 1024 };
  const framesAt = async (times: number[]) => {
    const seeks = await decodeAtTimes(path, times, grab, signal, video.fps);
    const frames: Array<{ item: SampledFrame; seek: SeekOutput } | null> = [];
    for (const [i, seek] of seeks.entries()) {
      if (!seek) {
        frames.push(null);
        continue;
      }
      const frame = await decodeImage(seek.output, VIDEO_MAX_SIDE);
      // Boxes are reported in the video's own (upright) pixels; rotation only swaps the axes.
      const scale = Math.max(width, height) / Math.max(frame.width, frame.height);
      const item = {
        ...frame,
        originalWidth: Math.round(frame.width * scale),
        originalHeight: Math.round(frame.height * scale),
        scale,
        format: video.codec,
        timeSeconds: Math.round(times[i]! * 1000) / 1000,
      };
      frames.push({ item, seek });
    }
    return frames;
  };
  const { items: frames, damagedSeeks } = preferClean(await atSliceCentres(frameCount, duration, framesAt));
  // The upright size (a phone clip stored sideways reports its stored size), the frame of every box.
  return { durationSeconds: duration, width: frames[0]!.originalWidth, height: frames[0]!.originalHeight, fps: video.fps, frames, damagedSeeks };
}
