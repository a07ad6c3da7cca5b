/**
 * Samples still frames from a video with ffmpeg (a child process, never this thread's
 * event loop): evenly spaced timestamps, each decoded by its own fast input seek, upright,
 * scaled so the longest side is at most VIDEO_MAX_SIDE.
 */
import { probeMedia, runFfmpeg } from '../media/ffmpeg.js';
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

export async function sampleFrames(path: string, frameCount: number, signal: AbortSignal): Promise<SampledVideo> {
  const info = await probeMedia(path, signal);
  if (!info.video) throw new MediaError(info.audio ? 'the file has an audio stream but no video stream' : 'the file has no video stream');
  const duration = info.durationSeconds;
  if (duration === null || !(duration > 0)) throw new MediaError('the video duration could not be read');
  if (duration > MAX_VIDEO_SECONDS) {
    throw new MediaError(`the video lasts ${Math.round(duration)} s; at most ${MAX_VIDEO_SECONDS} s are accepted`);
  }
  const { width, height } = info.video;
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
      format: info.video!.codec,
      timeSeconds: Math.round(time * 1000) / 1000,
    };
  };
  const frames: SampledFrame[] = [];
  for (let i = 0; i < frameCount; i++) {
    signal.throwIfAborted();
    // Centres of equal slices, so the first and last frames avoid fades and black leaders.
    const frame = await frameAt(((i + 0.5) / frameCount) * duration);
    if (frame) frames.push(frame);
  }
  // A one-frame video (a still sent as a clip): every seek lands past its only frame, so read from the start.
  if (frames.length === 0) {
    const first = await frameAt(0);
    if (first) frames.push(first);
  }
  if (frames.length === 0) throw new MediaError('no frame of the video could be decoded');
  // The upright size (a phone clip stored sideways reports its stored size), the frame of every box.
  return { durationSeconds: duration, width: frames[0]!.originalWidth, height: frames[0]!.originalHeight, fps: info.video.fps, frames };
}
