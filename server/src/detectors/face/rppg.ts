/**
 * Remote photoplethysmography: the pulse read from the colour of facial skin, by the POS
 * ("plane orthogonal to skin") method of W. Wang, A. C. den Brinker, S. Stuijk and G. de Haan,
 * "Algorithmic Principles of Remote PPG", IEEE TBME 64(7), 2017, Algorithm 1: per window of
 * 1.6 s the RGB means are normalised by their temporal mean, projected on the plane
 * S = [[0, 1, -1], [-2, 1, 1]], the two projections are combined with alpha = σ(S1)/σ(S2)
 * and the windows overlap-added. The pulse rate is the strongest spectral peak in 0.7–3.5 Hz
 * (42–210 bpm); its quality is the SNR of G. de Haan and V. Jeanne, "Robust Pulse Rate From
 * Chrominance-Based rPPG", IEEE TBME 60(10), 2013, §IV-B (power within ±0.1 Hz of the peak and
 * ±0.2 Hz of its first harmonic against the rest of the band).
 *
 * A live face in front of a camera carries this pulse; a photo, a mask, a replayed screen at a
 * distance and many face swaps lose or blur it. It is reported as evidence, not weighted: no
 * labelled video set here calibrates it, and compression, motion and make-up weaken real pulses.
 */
import { runFfmpeg } from '../media/ffmpeg.js';
import { Fft } from '../signal/fft.js';

/** Frame rate the face region is read at: above the Nyquist rate of 210 bpm, cheap to decode. */
const RPPG_FPS = 15;
/** Seconds of video read at most: enough for a stable spectrum, bounded work. */
const MAX_SECONDS = 20;
/** Side of the down-scaled skin patch: its mean colour is all POS needs. */
const PATCH = 24;
const BAND_HZ: [number, number] = [0.7, 3.5];

export interface PulseEstimate {
  bpm: number;
  snrDb: number;
  /** A clear periodic pulse (SNR >= 0 dB), a weak one, or none to be read. */
  quality: 'clear' | 'weak' | 'none';
  seconds: number;
  frames: number;
  fps: number;
}

export type Box = [number, number, number, number];

/** Mean RGB of skin-coloured pixels per frame (all pixels when too few look like skin). */
export function skinMeans(frames: Uint8Array, pixelsPerFrame: number): Float64Array[] {
  const count = Math.floor(frames.length / (pixelsPerFrame * 3));
  const means = [new Float64Array(count), new Float64Array(count), new Float64Array(count)];
  for (let f = 0; f < count; f++) {
    let r = 0, g = 0, b = 0, skin = 0, ar = 0, ag = 0, ab = 0;
    for (let p = 0; p < pixelsPerFrame; p++) {
      const i = (f * pixelsPerFrame + p) * 3;
      const R = frames[i]!, G = frames[i + 1]!, B = frames[i + 2]!;
      ar += R; ag += G; ab += B;
      // Skin in YCbCr (Chai & Ngan, 1999): Cb in 77..127 and Cr in 133..173.
      const cb = 128 - 0.168736 * R - 0.331264 * G + 0.5 * B;
      const cr = 128 + 0.5 * R - 0.418688 * G - 0.081312 * B;
      if (cb >= 77 && cb <= 127 && cr >= 133 && cr <= 173) {
        r += R; g += G; b += B; skin++;
      }
    }
    const useSkin = skin >= pixelsPerFrame * 0.2;
    const n = useSkin ? skin : pixelsPerFrame;
    means[0]![f] = (useSkin ? r : ar) / n;
    means[1]![f] = (useSkin ? g : ag) / n;
    means[2]![f] = (useSkin ? b : ab) / n;
  }
  return means;
}

/** POS pulse signal from per-frame RGB means (Wang et al. 2017, Algorithm 1). */
export function posPulse([red, green, blue]: Float64Array[], fps: number): Float64Array {
  const n = red!.length;
  const pulse = new Float64Array(n);
  const l = Math.ceil(1.6 * fps);
  const s1 = new Float64Array(l), s2 = new Float64Array(l);
  for (let start = 0; start + l <= n; start++) {
    let mr = 0, mg = 0, mb = 0;
    for (let t = start; t < start + l; t++) { mr += red![t]!; mg += green![t]!; mb += blue![t]!; }
    mr /= l; mg /= l; mb /= l;
    if (mr <= 0 || mg <= 0 || mb <= 0) continue;
    for (let k = 0; k < l; k++) {
      const r = red![start + k]! / mr, g = green![start + k]! / mg, b = blue![start + k]! / mb;
      s1[k] = g - b;
      s2[k] = -2 * r + g + b;
    }
    const sd2 = std(s2);
    const alpha = sd2 > 1e-12 ? std(s1) / sd2 : 0;
    let mean = 0;
    for (let k = 0; k < l; k++) mean += s1[k]! + alpha * s2[k]!;
    mean /= l;
    for (let k = 0; k < l; k++) pulse[start + k] = pulse[start + k]! + s1[k]! + alpha * s2[k]! - mean;
  }
  return pulse;
}

function std(values: Float64Array): number {
  let mean = 0;
  for (const v of values) mean += v;
  mean /= values.length;
  let variance = 0;
  for (const v of values) variance += (v - mean) ** 2;
  return Math.sqrt(variance / values.length);
}

/** Strongest pulse frequency in the band and its SNR (de Haan & Jeanne 2013, §IV-B). */
export function pulseSpectrum(pulse: Float64Array, fps: number): { hz: number; snrDb: number } | null {
  const size = Math.max(1024, 2 ** Math.ceil(Math.log2(pulse.length)));
  const re = new Float64Array(size), im = new Float64Array(size);
  for (let i = 0; i < pulse.length; i++) re[i] = pulse[i]! * (0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (pulse.length - 1)));
  new Fft(size).transform(re, im);
  const hzPerBin = fps / size;
  const power = (bin: number) => re[bin]! ** 2 + im[bin]! ** 2;
  const low = Math.ceil(BAND_HZ[0] / hzPerBin), high = Math.floor(Math.min(BAND_HZ[1], fps / 2) / hzPerBin);
  let peak = -1, peakPower = 0, total = 0;
  for (let bin = low; bin <= high; bin++) {
    total += power(bin);
    if (power(bin) > peakPower) { peakPower = power(bin); peak = bin; }
  }
  if (peak < 0 || total <= 0) return null;
  const hz = peak * hzPerBin;
  const near = (bin: number) => Math.abs(bin * hzPerBin - hz) <= 0.1 || Math.abs(bin * hzPerBin - 2 * hz) <= 0.2;
  let signal = 0, noise = 0;
  const top = Math.floor(Math.min(4, fps / 2) / hzPerBin);
  for (let bin = low; bin <= top; bin++) {
    if (near(bin)) signal += power(bin);
    else noise += power(bin);
  }
  return { hz, snrDb: 10 * Math.log10(Math.max(signal, 1e-30) / Math.max(noise, 1e-30)) };
}

/**
 * Reads the skin of one face box (in the upright video's pixels) at 15 fps for up to 20 s and
 * estimates the pulse. Null when the video is too short for a pulse spectrum (under 5 s).
 */
export async function estimatePulse(path: string, box: Box, video: { width: number; height: number; durationSeconds: number }, signal: AbortSignal): Promise<PulseEstimate | null> {
  const seconds = Math.min(MAX_SECONDS, video.durationSeconds);
  if (seconds < 5) return null;
  // The cheeks and forehead: the box's centre, away from hair, background and the mouth's motion.
  const [x, y, w, h] = box;
  const left = Math.max(0, Math.round(x + 0.2 * w));
  const top = Math.max(0, Math.round(y + 0.1 * h));
  const width = Math.max(2, Math.min(video.width - left, Math.round(0.6 * w)));
  const height = Math.max(2, Math.min(video.height - top, Math.round(0.6 * h)));
  const { stdout } = await runFfmpeg(
    ['-t', seconds.toFixed(3), '-i', path, '-an', '-vf', `fps=${RPPG_FPS},crop=${width}:${height}:${left}:${top},scale=${PATCH}:${PATCH}:flags=area`, '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
    { signal, maxOutputBytes: (MAX_SECONDS + 2) * RPPG_FPS * PATCH * PATCH * 3 },
  );
  const means = skinMeans(new Uint8Array(stdout.buffer, stdout.byteOffset, stdout.byteLength), PATCH * PATCH);
  const frames = means[0]!.length;
  if (frames < 5 * RPPG_FPS) return null;
  const spectrum = pulseSpectrum(posPulse(means, RPPG_FPS), RPPG_FPS);
  if (!spectrum) return { bpm: 0, snrDb: -Infinity, quality: 'none', seconds: frames / RPPG_FPS, frames, fps: RPPG_FPS };
  const snrDb = Math.round(spectrum.snrDb * 100) / 100;
  return {
    bpm: Math.round(spectrum.hz * 600) / 10,
    snrDb,
    quality: snrDb >= 0 ? 'clear' : snrDb >= -6 ? 'weak' : 'none',
    seconds: Math.round((frames / RPPG_FPS) * 100) / 100,
    frames,
    fps: RPPG_FPS,
  };
}
