/**
 * Samples still frames from a video with ffmpeg (a child process, never this thread's
 * event loop): evenly spaced timestamps, each decoded by its own fast input seek (read again
 * from earlier when the seek decodes damaged pictures), upright, scaled so the longest side
 * is at most VIDEO_MAX_SIDE.
 */
import { probeMedia, runFfmpeg, type FfmpegOptions, type StreamInfo } from '../media/ffmpeg.js';
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

/**
 * The output of `outputArgs` (e.g. one PNG) at `time`, by a fast input seek. A fast seek
 * starts decoding at the keyframe the container names, and some files (clips cut by stream
 * copy whose later keyframes need parameter sets sent only at the start, broken open GOPs)
 * decode concealed garbage from there. Analysed, such a frame is evidence of nothing: a face
 * embedding of concealed macroblocks looks like another person. So a seek that reports damage
 * is decoded again from up to REREAD_SECONDS earlier; if that is damaged too, the output is
 * marked damaged (see preferClean). Null when the seek lands past the last decodable frame.
 */
export async function seekAndDecode(path: string, time: number, outputArgs: string[], options: FfmpegOptions): Promise<SeekOutput | null> {
  // -nostats: the progress lines would push the decoders' reports out of the kept stderr tail.
  const fast = await runFfmpeg(['-nostats', '-ss', time.toFixed(3), '-i', path, ...outputArgs], options).catch((error: unknown) => {
    // ffmpeg may also give up on such a keyframe; the read from earlier decides (and fails the job as before if it fails too).
    if (error instanceof MediaError && !options.signal?.aborted) return null;
    throw error;
  });
  if (fast && !DECODE_DAMAGE.test(fast.stderr)) return fast.stdout.length ? { output: fast.stdout, readAgain: false, damaged: false } : null;
  const from = Math.max(0, time - REREAD_SECONDS);
  const again = await runFfmpeg(['-nostats', ...(from > 0 ? ['-ss', from.toFixed(3)] : []), '-i', path, '-ss', (time - from).toFixed(3), ...outputArgs], options);
  if (DECODE_DAMAGE.test(again.stderr)) {
    const output = again.stdout.length ? again.stdout : fast?.stdout;
    return output?.length ? { output, readAgain: false, damaged: true } : null;
  }
  if (!again.stdout.length) return null; // past the last decodable frame after all
  return { output: again.stdout, readAgain: true, damaged: false };
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
 * often fades or black leaders). When every seek lands past the last decodable frame (a
 * one-frame video, a still sent as a clip), once from the start; nothing at all is an error.
 */
export async function atSliceCentres<T>(count: number, durationSeconds: number, grab: (time: number) => Promise<T | null>, signal: AbortSignal): Promise<T[]> {
  const grabbed: T[] = [];
  for (let i = 0; i < count; i++) {
    signal.throwIfAborted();
    const item = await grab(((i + 0.5) / count) * durationSeconds);
    if (item) grabbed.push(item);
  }
  if (grabbed.length === 0) {
    const first = await grab(0);
    if (first) grabbed.push(first);
  }
  if (grabbed.length === 0) throw new MediaError('no frame of the video could be decoded');
  return grabbed;
}

export async function sampleFrames(path: string, frameCount: number, signal: AbortSignal): Promise<SampledVideo> {
  const { video, durationSeconds: duration } = await probeVideo(path, signal);
  const { width, height } = video;
  const frameAt = async (time: number): Promise<{ item: SampledFrame; seek: SeekOutput } | null> => {
    // PNG rather than raw pixels: ffmpeg applies the stream's rotation (phone videos are
    // often stored sideways) and the frame's real size travels with it.
    const seek = await seekAndDecode(
      path,
      time,
      ['-frames:v', '1', '-an', '-vf', `scale=w='min(${VIDEO_MAX_SIDE},iw)':h='min(${VIDEO_MAX_SIDE},ih)':force_original_aspect_ratio=decrease`, '-f', 'image2pipe', '-vcodec', 'png', 'pipe:1'],
      { signal, maxOutputBytes: 64 * 1024 * 1024 },
    );
    if (!seek) return null;
    const frame = await decodeImage(seek.output, VIDEO_MAX_SIDE);
    // Boxes are reported in the video's own (upright) pixels; rotation only swaps the axes.
    const scale = Math.max(width, height) / Math.max(frame.width, frame.height);
    const item = {
      ...frame,
      originalWidth: Math.round(frame.width * scale),
      originalHeight: Math.round(frame.height * scale),
      scale,
      format: video.codec,
      timeSeconds: Math.round(time * 1000) / 1000,
    };
    return { item, seek };
  };
  const { items: frames, damagedSeeks } = preferClean(await atSliceCentres(frameCount, duration, frameAt, signal));
  // The upright size (a phone clip stored sideways reports its stored size), the frame of every box.
  return { durationSeconds: duration, width: frames[0]!.originalWidth, height: frames[0]!.originalHeight, fps: video.fps, frames, damagedSeeks };
}
