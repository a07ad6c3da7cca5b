/**
 * Pairs of consecutive frames at evenly spaced times of a video, at native resolution (up to
 * 1920 px on the longest side), upright, as RGB rasters. ffmpeg seeks each time on its own
 * and writes binary PPM, whose header carries the frame's real size after rotation and scaling.
 * At most two frames are in memory per sample, whatever the video's length and size.
 */
import type { Raster } from '../image/image-input.js';
import type { Signal } from '../types.js';
import { round4 } from '../result.js';
import { atSliceCentres, decodeAtTimes, preferClean, probeVideo, PPM_HEADER, splitPpms, type DamagedSeeks, type FrameGrab, type SeekOutput } from '../face/video-frames.js';
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
  damagedSeeks: DamagedSeeks;
}

/** Concatenated binary PPMs (P6, maxval 255) as rasters. */
export function parsePpms(bytes: Buffer): Raster[] {
  return splitPpms(bytes).map((ppm) => {
    const header = PPM_HEADER.exec(ppm.subarray(0, 64).toString('latin1'))!;
    return { data: ppm.subarray(header[0].length), width: Number(header[1]), height: Number(header[2]), channels: 3 };
  });
}

export async function sampleFramePairs(path: string, count: number, signal: AbortSignal): Promise<SampledPairs> {
  const { video, durationSeconds: duration } = await probeVideo(path, signal);
  // format=rgb24: from a video of more than 8 bits (an iPhone's 10-bit HEVC, ProRes) ffmpeg would write 16-bit PPMs.
  const grab: FrameGrab = { frames: 2, filter: `scale=w='min(${MAX_SIDE},iw)':h='min(${MAX_SIDE},ih)':force_original_aspect_ratio=decrease,format=rgb24`, codec: 'ppm', maxOutputBytes: 2 * MAX_SIDE * MAX_SIDE * 3 + 1024 };
  const pairsAt = async (times: number[]) =>
    (await decodeAtTimes(path, times, grab, signal, video.fps)).map((seek, i): { item: FramePair; seek: SeekOutput } | null => {
      const [first, second] = seek ? parsePpms(seek.output) : [];
      return first ? { item: { timeSeconds: Math.round(times[i]! * 1000) / 1000, first, second: second ?? null }, seek: seek! } : null;
    });
  const { items: pairs, damagedSeeks } = preferClean(await atSliceCentres(count, duration, pairsAt));
  return { durationSeconds: duration, fps: video.fps, width: video.width, height: video.height, codec: video.codec, pairs, damagedSeeks };
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

/** A sampled frame's sensor-noise cues. */
export interface NoiseCues {
  /** Mean absolute high-pass residual of the frame's luma: its noise and fine-texture level. */
  noiseLevel: number;
  /** Correlation of the residuals of this frame and the next (null without a next frame). */
  residualCorrelation: number | null;
}

/**
 * A camera's noise level follows its sensor and exposure (Healey & Kondepudy, IEEE TPAMI 1994)
 * and its noise is independent from one frame to the next; a render, a re-encoded replay or an
 * injected stream tends to lose both.
 */
export function noiseCues(pair: FramePair): NoiseCues {
  const { width, height } = pair.first;
  const first = residual(luma(pair.first), width, height);
  let sum = 0;
  for (const value of first) sum += Math.abs(value);
  const noiseLevel = sum / first.length;
  if (!pair.second || pair.second.width !== width || pair.second.height !== height) return { noiseLevel, residualCorrelation: null };
  const second = residual(luma(pair.second), width, height);
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < first.length; i++) {
    ab += first[i]! * second[i]!;
    aa += first[i]! * first[i]!;
    bb += second[i]! * second[i]!;
  }
  return { noiseLevel, residualCorrelation: aa > 0 && bb > 0 ? ab / Math.sqrt(aa * bb) : null };
}

export const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

/** The noise cues over the sampled frames as two signals, reported with weight 0 for `why`. */
export function noiseSignals(cues: NoiseCues[], why: string): Signal[] {
  const noiseLevels = cues.map((c) => c.noiseLevel);
  const noiseMean = noiseLevels.length ? mean(noiseLevels) : 0;
  const noiseCv = noiseLevels.length > 1 && noiseMean > 0 ? Math.sqrt(mean(noiseLevels.map((n) => (n - noiseMean) ** 2))) / noiseMean : null;
  const correlations = cues.map((c) => c.residualCorrelation).filter((c): c is number => c !== null);
  return [
    {
      id: 'noise-level-stability',
      label: 'Stability of the noise level across the video',
      score: null,
      weight: 0,
      evidence: { meanResidual: round4(noiseMean), coefficientOfVariation: noiseCv === null ? null : round4(noiseCv), frames: noiseLevels.length, note: why },
    },
    {
      id: 'residual-correlation',
      label: "Correlation of consecutive frames' noise residuals",
      score: null,
      weight: 0,
      evidence: correlations.length
        ? { mean: round4(mean(correlations)), pairs: correlations.length, note: `sensor noise is independent from frame to frame; static scenes raise it too. ${why}` }
        : { note: 'no pair of consecutive frames could be read' },
    },
  ];
}
