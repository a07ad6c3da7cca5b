/**
 * Samples still frames from a video with ffmpeg (a child process, never this thread's
 * event loop): evenly spaced timestamps, each decoded by its own fast input seek, upright,
 * scaled so the longest side is at most VIDEO_MAX_SIDE.
 */
import { probeMedia, runFfmpeg, type StreamInfo } from '../media/ffmpeg.js';
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
  const frameAt = async (time: number): Promise<SampledFrame | null> => {
    // PNG rather than raw pixels: ffmpeg applies the stream's rotation (phone videos are
    // often stored sideways) and the frame's real size travels with it.
    const { stdout } = await runFfmpeg(
      [
        '-ss',
        time.toFixed(3),
        '-i',
        path,
        '-frames:v',
        '1',
        '-an',
        '-vf',
        `scale=w='min(${VIDEO_MAX_SIDE},iw)':h='min(${VIDEO_MAX_SIDE},ih)':force_original_aspect_ratio=decrease`,
        '-f',
        'image2pipe',
        '-vcodec',
        'png',
        'pipe:1',
      ],
      { signal, maxOutputBytes: 64 * 1024 * 1024 },
    );
    if (stdout.length === 0) return null; // a seek past the last decodable frame yields nothing
    const frame = await decodeImage(stdout, VIDEO_MAX_SIDE);
    // Boxes are reported in the video's own (upright) pixels; rotation only swaps the axes.
    const scale = Math.max(width, height) / Math.max(frame.width, frame.height);
    return {
      ...frame,
      originalWidth: Math.round(frame.width * scale),
      originalHeight: Math.round(frame.height * scale),
      scale,
      format: video.codec,
      timeSeconds: Math.round(time * 1000) / 1000,
    };
  };
  const frames = await atSliceCentres(frameCount, duration, frameAt, signal);
  // The upright size (a phone clip stored sideways reports its stored size), the frame of every box.
  return { durationSeconds: duration, width: frames[0]!.originalWidth, height: frames[0]!.originalHeight, fps: video.fps, frames };
}
