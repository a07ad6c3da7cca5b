/**
 * Model-free presentation-attack cues measured on the face region, used beside the learned
 * anti-spoof and liveness models.
 *
 * - Moiré: K. Patel, H. Han, A. K. Jain, "Live Face Video vs. Spoof Face Video: Use of Moiré
 *   Patterns to Detect Replay Video Attacks", ICB 2015. A screen re-captured by a camera
 *   aliases its pixel grid into moiré: narrow, strong peaks in the mid/high spatial
 *   frequencies that a live face (whose spectrum falls off smoothly) does not have. We
 *   measure the strongest peak above each frequency ring's median power (§3 of the paper
 *   analyses the same patterns in the frequency domain; its classifier is not reproduced).
 * - Blur and specular reflection: D. Wen, H. Han, A. K. Jain, "Face Spoof Detection With
 *   Image Distortion Analysis", IEEE TIFS 10(4), 2015, §III-A (specular reflection: printed
 *   photos and screens reflect light as glossy, low-saturation highlights) and §III-B
 *   (blurriness: a re-captured face loses sharpness, here the variance of the Laplacian).
 *
 * None of these cues was fitted to data (no labelled spoof set large enough exists here):
 * their logistic mappings are set by hand from the cue's physics and carry small weights.
 */
import sharp from 'sharp';
import type { RgbImage } from './human-runtime.js';
import { powerSpectrum2d } from '../signal/fft.js';
import { sigmoid } from '../result.js';

export type Box = [number, number, number, number];

export interface CueValue {
  /** Probability-like spoof score of this cue alone, null when the face is too small. */
  score: number | null;
  evidence: Record<string, number | string>;
}

const round3 = (value: number) => Math.round(value * 1000) / 1000;

/** A sub-rectangle of the face box clamped to the image, in whole pixels. */
function region(image: RgbImage, box: Box, fraction: number) {
  const [x, y, w, h] = box;
  const cx = x + w / 2;
  const cy = y + h / 2;
  // Clamped into the image: a box reaching past the frame still yields its nearest pixels.
  const left = Math.min(image.width - 1, Math.max(0, Math.round(cx - (w * fraction) / 2)));
  const top = Math.min(image.height - 1, Math.max(0, Math.round(cy - (h * fraction) / 2)));
  const width = Math.max(1, Math.min(image.width - left, Math.round(w * fraction)));
  const height = Math.max(1, Math.min(image.height - top, Math.round(h * fraction)));
  return { left, top, width, height };
}

function luminance(image: RgbImage, index: number): number {
  return 0.299 * image.data[index * 3]! + 0.587 * image.data[index * 3 + 1]! + 0.114 * image.data[index * 3 + 2]!;
}

/** Moiré peak strength in the face's spectrum (Patel et al. 2015). */
export function moireCue(image: RgbImage, box: Box): CueValue {
  // A square window at native resolution: resampling would itself alias or erase moiré.
  const side = Math.min(box[2], box[3]) * 0.7;
  if (side < 32) return { score: null, evidence: { reason: 'face too small for a spectrum' } };
  const n = Math.min(256, 2 ** Math.floor(Math.log2(side)));
  const cx = Math.round(box[0] + box[2] / 2);
  const cy = Math.round(box[1] + box[3] / 2);
  const left = Math.min(Math.max(0, cx - n / 2), image.width - n);
  const top = Math.min(Math.max(0, cy - n / 2), image.height - n);
  if (left < 0 || top < 0) return { score: null, evidence: { reason: 'face window outside the image' } };
  const window = new Float64Array(n * n);
  for (let y = 0; y < n; y++) for (let x = 0; x < n; x++) window[y * n + x] = luminance(image, (top + y) * image.width + left + x);
  const power = powerSpectrum2d(window, n, { subtractMean: true });

  // Rings of equal radius; within each, the median log-power is the smooth natural falloff.
  const rings = new Map<number, number[]>();
  const candidates: Array<{ ring: number; logPower: number }> = [];
  const jpegStep = n / 8; // 8×8 JPEG blocks put lines of energy at multiples of n/8: not moiré
  const offGrid = (k: number) => k % jpegStep !== 0;
  for (let v = 0; v <= n / 2; v++) {
    for (let u = 0; u < n; u++) {
      const fu = u <= n / 2 ? u : u - n;
      const radius = Math.hypot(fu, v) / n; // cycles per pixel
      if (radius < 0.12 || radius > 0.48) continue;
      const ring = Math.round(radius * n);
      const logPower = Math.log(power[v * n + u]! + 1e-9);
      if (!rings.has(ring)) rings.set(ring, []);
      rings.get(ring)!.push(logPower);
      if (Math.abs(fu) > 1 && v > 1 && offGrid(Math.abs(fu)) && offGrid(v)) candidates.push({ ring, logPower });
    }
  }
  const ringMedian = new Map<number, number>();
  for (const [ring, values] of rings) {
    values.sort((a, b) => a - b);
    ringMedian.set(ring, values[Math.floor(values.length / 2)]!);
  }
  let peak = 0;
  let strongPeaks = 0;
  for (const { ring, logPower } of candidates) {
    const residual = logPower - ringMedian.get(ring)!;
    peak = Math.max(peak, residual);
    if (residual > 4.5) strongPeaks++;
  }
  // Pure noise tops out near 2.7 (the largest of ~10^4 exponential draws over their median);
  // a screen's moiré stands 5+ natural-log units (150x power) above its ring.
  return {
    score: round3(sigmoid((peak - 4.2) / 0.5)),
    evidence: { windowPixels: n, peakAboveRing: round3(peak), strongPeaks },
  };
}

/** Sharpness (variance of the Laplacian) of the face at a fixed 128-pixel scale (Wen et al. §III-B). */
export async function blurCue(image: RgbImage, box: Box): Promise<CueValue> {
  if (box[2] < 48) return { score: null, evidence: { reason: 'face too small to judge sharpness' } };
  const size = 128;
  const grey = await sharp(Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength), {
    raw: { width: image.width, height: image.height, channels: 3 },
  })
    .extract(region(image, box, 0.8))
    .resize(size, size, { fit: 'fill' })
    .greyscale()
    .raw()
    .toBuffer();
  let sum = 0;
  let sumSquares = 0;
  let count = 0;
  for (let y = 1; y < size - 1; y++) {
    for (let x = 1; x < size - 1; x++) {
      const i = y * size + x;
      const laplacian = grey[i - 1]! + grey[i + 1]! + grey[i - size]! + grey[i + size]! - 4 * grey[i]!;
      sum += laplacian;
      sumSquares += laplacian * laplacian;
      count++;
    }
  }
  const variance = sumSquares / count - (sum / count) ** 2;
  // A focused face at this scale measures ~100-600; below ~20 detail is gone.
  return {
    score: round3(sigmoid((Math.log(25) - Math.log(variance + 1)) / 0.5)),
    evidence: { laplacianVariance: round3(variance) },
  };
}

/** Share of glossy highlight pixels (bright, unsaturated) on the inner face (Wen et al. §III-A). */
export function specularCue(image: RgbImage, box: Box): CueValue {
  if (box[2] < 32) return { score: null, evidence: { reason: 'face too small' } };
  const { left, top, width, height } = region(image, box, 0.7);
  let specular = 0;
  let total = 0;
  let brightest = 0;
  for (let y = top; y < top + height; y++) {
    for (let x = left; x < left + width; x++) {
      const i = (y * image.width + x) * 3;
      const r = image.data[i]!;
      const g = image.data[i + 1]!;
      const b = image.data[i + 2]!;
      const max = Math.max(r, g, b);
      const min = Math.min(r, g, b);
      brightest = Math.max(brightest, max);
      const saturation = max === 0 ? 0 : (max - min) / max;
      if (max >= 235 && saturation <= 0.12) specular++;
      total++;
    }
  }
  const fraction = specular / total;
  // Skin highlights cover ~0-2 % of the inner face; glare on a screen or glossy print more.
  return {
    score: round3(sigmoid((fraction - 0.05) / 0.015)),
    evidence: { specularFraction: round3(fraction), brightest },
  };
}
