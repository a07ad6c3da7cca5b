/**
 * Pairs of consecutive frames at evenly spaced times of a video, at native resolution (up to
 * 1920 px on the longest side), upright, as RGB rasters. ffmpeg seeks each time on its own
 * and writes binary PPM, whose header carries the frame's real size after rotation and scaling.
 * At most two frames are in memory per sample, whatever the video's length and size.
 */
import { runFfmpeg } from '../media/ffmpeg.js';
import type { Raster } from '../image/image-input.js';
import { atSliceCentres, probeVideo } from '../face/video-frames.js';
/** Generator traces are high-frequency: frames are read at up to full HD, never smaller. */
const MAX_SIDE = 1920;

export interface FramePair {
  timeSeconds: number;
  first: Raster;
  /** The next frame, when the video has one after `first`. */
  second: Raster | null;
}

export interface SampledPairs {
  durationSeconds: number;
  fps: number | null;
  width: number;
  height: number;
  codec: string;
  pairs: FramePair[];
}

/** Splits concatenated binary PPMs (P6, maxval 255). */
export function parsePpms(bytes: Buffer): Raster[] {
  const rasters: Raster[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const header = /^P6\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(bytes.subarray(offset, offset + 64).toString('latin1'));
    if (!header || header[3] !== '255') break;
    const width = Number(header[1]), height = Number(header[2]);
    const start = offset + header[0].length;
    const end = start + width * height * 3;
    if (end > bytes.length) break;
    rasters.push({ data: bytes.subarray(start, end), width, height, channels: 3 });
    offset = end;
  }
  return rasters;
}

export async function sampleFramePairs(path: string, count: number, signal: AbortSignal): Promise<SampledPairs> {
  const { video, durationSeconds: duration } = await probeVideo(path, signal);
  const pairAt = async (time: number): Promise<FramePair | null> => {
    const { stdout } = await runFfmpeg(
      ['-ss', time.toFixed(3), '-i', path, '-frames:v', '2', '-an', '-vf', `scale=w='min(${MAX_SIDE},iw)':h='min(${MAX_SIDE},ih)':force_original_aspect_ratio=decrease`, '-f', 'image2pipe', '-vcodec', 'ppm', 'pipe:1'],
      { signal, maxOutputBytes: 2 * MAX_SIDE * MAX_SIDE * 3 + 1024 },
    );
    const [first, second] = parsePpms(stdout);
    return first ? { timeSeconds: Math.round(time * 1000) / 1000, first, second: second ?? null } : null;
  };
  const pairs = await atSliceCentres(count, duration, pairAt, signal);
  return { durationSeconds: duration, fps: video.fps, width: video.width, height: video.height, codec: video.codec, pairs };
}

/** Luma (BT.601) of an RGB raster. */
export function luma(raster: Raster): Float32Array {
  const out = new Float32Array(raster.width * raster.height);
  for (let i = 0, p = 0; i < out.length; i++, p += raster.channels) out[i] = 0.299 * raster.data[p]! + 0.587 * raster.data[p + 1]! + 0.114 * raster.data[p + 2]!;
  return out;
}

/** The high-pass residual (value minus its 3×3 mean) of a luma plane, borders left at 0. */
export function residual(y: Float32Array, width: number, height: number): Float32Array {
  const out = new Float32Array(y.length);
  for (let r = 1; r < height - 1; r++) {
    for (let c = 1; c < width - 1; c++) {
      const i = r * width + c;
      let sum = 0;
      for (let dr = -1; dr <= 1; dr++) for (let dc = -1; dc <= 1; dc++) sum += y[i + dr * width + dc]!;
      out[i] = y[i]! - sum / 9;
    }
  }
  return out;
}
