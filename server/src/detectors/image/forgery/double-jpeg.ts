/**
 * Aligned double-JPEG localisation: T. Bianchi and A. Piva, "Image Forgery Localization via
 * Block-Grained Analysis of JPEG Artifacts", IEEE TIFS 7(3), 2012, §III (the aligned double
 * JPEG model) and §V (the simplified likelihood map).
 *
 * A region pasted into a JPEG and saved again was compressed once on the final grid (or off
 * grid), while the rest was compressed twice. For a DCT frequency with last quantiser Q2 and
 * first quantiser Q1, an aligned double-compressed coefficient k is about n(k)·Q1/Q2 times as
 * likely as a singly compressed one, n(k) counting the Q1-multiples that requantise to k
 * (the periodic "double quantisation" artefact). Q1 is estimated per frequency by maximum
 * likelihood over the image; each 8x8 block's log-likelihood ratio summed over the first low
 * AC frequencies gives the probability that the block was compressed once (tampered).
 * The coefficients are recomputed from the decoded pixels on the stored 8x8 grid (no npm
 * package exposes JPEG coefficients; the block DCT is shared with JPEG ghosts), so
 * frequencies with Q2 < 2 are too noisy and skipped. Partial edge blocks are left out: the
 * encoder padded them with pixels the decoded image no longer has. Blocks whose decoded colours
 * reach the ends of the 8-bit range are not read either: each decoder clipped its samples there,
 * so their recomputed coefficients leave the quantiser lattice whatever the block's history; the
 * map takes their neighbours' value.
 */
import { countAtLeast, quantile, smoothMap } from '../forensic-map.js';
import { ZIGZAG } from '../jpeg-structure.js';
import { clippedBlocks, wholeBlockCoefficient, type BlockDct } from './block-dct.js';
import { skippedMethod, type MethodResult } from './method.js';

export const DOUBLE_JPEG_LABEL = 'Aligned double-JPEG quantisation (Bianchi & Piva 2012)';

const FREQUENCIES = 8; // first AC coefficients in zigzag order
const MAX_Q1 = 24;
const FLOOR = 0.05; // likelihood floor: rounding errors put coefficients in "empty" bins now and then
const MIN_GAIN_PER_COEFFICIENT = 0.03; // nats: below it the histogram shows no double quantisation
const MAX_EMPTIED_BIN_FILL = 0.5; // share of the smooth expectation left in bins q1 empties
const MIN_EXPECTED_IN_EMPTIED_BINS = 20; // coefficients: fewer cannot show a bin is empty
/**
 * Nats per coefficient the strongest frequency must gain before the image counts as compressed
 * twice on this grid. Weaker traces are what resizing between two compressions leaves: photos of
 * the phone fitting lists scaled to 1600 px and saved at quality 70 (as messaging apps send
 * them) showed a trace in 36 of 506, strongest gain at most 0.217, and their maps marked blocks
 * at random; photos compressed twice on one grid (first at quality 55-80, then 85-95) gained
 * 0.26-1.72, but for 2 of the 120 with a trace. A trace this weak localises nothing.
 */
export const MIN_STRONGEST_GAIN = 0.25;
/**
 * A colour sample within this many levels of 0 or 255 marks its block as clipped (a clip at the
 * first decode is rung by a level or two by the second compression). In untouched photos
 * compressed twice on one grid (the phone fitting lists' every fourth photo scaled to 1600 px,
 * saved at quality 55-80, then at 85-95), about half the blocks touching these levels were marked
 * singly compressed against 10-20 % of the others, and they lifted 87 of 120 maps' peaks over 0.5.
 */
const CLIP_MARGIN = 2;

/** n(k): how many integers j satisfy round(j·q1 / q2) = k. */
function periodicCount(k: number, q1: number, q2: number): number {
  // round(j q1/q2) = k  <=>  (k - 0.5) q2 / q1 <= j < (k + 0.5) q2 / q1
  const low = Math.ceil(((k - 0.5) * q2) / q1 - 1e-9);
  const high = Math.ceil(((k + 0.5) * q2) / q1 - 1e-9) - 1;
  return Math.max(0, high - low + 1);
}

/**
 * Whether the bins a first quantiser q1 > q2 empties are empty where the histogram is populated.
 * Each such bin's count is weighed against the log-linear interpolation between the nearest bins
 * q1 keeps on either side, which is what a Laplacian single-compression histogram puts there
 * however steep it is. The likelihood gain alone accepted q1 = q2 + 1 on steep histograms of
 * photos compressed once (or resized between compressions), whose predicted-empty bins hold few
 * coefficients. In the 262 double quantisations found in fit-forgery's set and copy-move sets
 * 41-43 the emptied bins keep a median 0.17 of that count (rounding in the decoded pixels
 * refills them a little), at most 0.41; at most half is accepted, which changed none of them.
 */
function binsEmptied(bins: Int32Array, q1: number, q2: number): boolean {
  let observed = 0, expected = 0;
  for (const sign of [1, -1]) {
    let previous = 0; // the last bin q1 keeps on this side; the zero bin does not count (dead zone)
    for (let kept = 1; kept <= 1023; kept++) {
      if (periodicCount(sign * kept, q1, q2) === 0) continue;
      // Every bin between two kept ones was emptied by q1.
      for (let m = previous > 0 ? previous + 1 : kept; m < kept; m++) {
        const t = (m - previous) / (kept - previous);
        observed += bins[sign * m + 1024]!;
        expected += bins[sign * previous + 1024]! ** (1 - t) * bins[sign * kept + 1024]! ** t;
      }
      previous = kept;
    }
  }
  return expected >= MIN_EXPECTED_IN_EMPTIED_BINS && observed <= MAX_EMPTIED_BIN_FILL * expected;
}

/** `rgb` (interleaved, `width` wide): the decoded colours, read for clipped blocks only when there is a map to draw. */
export function alignedDoubleJpeg(dct: BlockDct, quantTable: readonly number[], rgb: Uint8Array, width: number): MethodResult {
  const cols = dct.fullCols, rows = dct.fullRows;
  const blocks = cols * rows;
  const frequencies = ZIGZAG.slice(1, 1 + FREQUENCIES);
  const quantised = frequencies.map((natural) => {
    const coefficients = wholeBlockCoefficient(dct, natural), step = quantTable[natural]!;
    const column = new Int32Array(blocks);
    for (let b = 0; b < blocks; b++) column[b] = Math.floor(coefficients[b]! / step + 0.5); // Math.round, faster in V8
    return column;
  });
  const logRatio = new Float64Array(blocks);
  const informative = new Uint16Array(blocks);
  const perFrequency: Array<{ frequency: number; q2: number; q1: number | null; gain: number }> = [];
  for (const [fi, natural] of frequencies.entries()) {
    const q2 = quantTable[natural]!;
    if (q2 < 2) {
      perFrequency.push({ frequency: natural, q2, q1: null, gain: 0 });
      continue;
    }
    // |coefficient| <= 1024 for 8-bit samples, so |k| <= 512 once Q2 >= 2: counted in an array.
    const bins = new Int32Array(2 * 1024 + 1);
    for (const k of quantised[fi]!) bins[k + 1024]!++;
    const histogram = new Map<number, number>();
    for (let k = -1024; k <= 1024; k++) if (k !== 0 && bins[k + 1024]! > 0) histogram.set(k, bins[k + 1024]!);
    const total = [...histogram.values()].reduce((a, b) => a + b, 0);
    if (total < 200) {
      perFrequency.push({ frequency: natural, q2, q1: null, gain: 0 });
      continue;
    }
    let best = { q1: 0, gain: 0 };
    // Only a coarser first quantiser (Q1 > Q2) is searched: it empties histogram bins, a trace
    // a smooth single-compression histogram cannot imitate. With Q1 < Q2 the periodic
    // factor only alternates mildly and a steep (Laplacian) histogram fakes it.
    for (let q1 = q2 + 1; q1 <= MAX_Q1; q1++) {
      if (!binsEmptied(bins, q1, q2)) continue;
      let gain = 0;
      for (const [k, count] of histogram) gain += count * Math.log(Math.max(FLOOR, (periodicCount(k, q1, q2) * q1) / q2));
      gain /= total;
      if (gain > best.gain) best = { q1, gain };
    }
    if (best.gain < MIN_GAIN_PER_COEFFICIENT) {
      perFrequency.push({ frequency: natural, q2, q1: null, gain: Math.round(best.gain * 1000) / 1000 });
      continue;
    }
    perFrequency.push({ frequency: natural, q2, q1: best.q1, gain: Math.round(best.gain * 1000) / 1000 });
    const column = quantised[fi]!;
    // Every non-zero k of the column is a histogram bin: one logarithm per bin, not per block.
    const logFactor = new Map<number, number>();
    for (const k of histogram.keys()) logFactor.set(k, Math.log(Math.max(FLOOR, (periodicCount(k, best.q1, q2) * best.q1) / q2)));
    for (let block = 0; block < blocks; block++) {
      const k = column[block]!;
      if (k === 0) continue;
      logRatio[block]! += logFactor.get(k)!;
      informative[block]!++;
    }
  }
  const doubleFrequencies = perFrequency.filter((f) => f.q1 !== null).length;
  /** No map: the frequencies read and why they do not localise. */
  const noMap = (skipped: string, note: string): MethodResult => ({ ...skippedMethod('double-jpeg', DOUBLE_JPEG_LABEL, skipped), evidence: { doubleCompressed: false, frequencies: perFrequency, note } });
  if (doubleFrequencies === 0) return noMap('no double-quantisation trace', 'no double-quantisation trace: the image looks compressed once, so this method cannot localise');
  const strongestGain = Math.max(...perFrequency.map((f) => f.gain));
  if (strongestGain < MIN_STRONGEST_GAIN) {
    const note = `a double-quantisation trace too weak to localise with (strongest gain ${strongestGain} nats per coefficient, under ${MIN_STRONGEST_GAIN}): what resizing between two compressions leaves`;
    return noMap(note, note);
  }
  // Probability of single compression (tampered) per block; blocks without informative
  // coefficients carry no evidence and read 0; clipped blocks are not read (a forgery's region
  // often holds some, and its other blocks still show it).
  const clipped = clippedBlocks(rgb, width, cols, rows, CLIP_MARGIN);
  const values = new Float32Array(blocks);
  for (let block = 0; block < blocks; block++) {
    if (informative[block]! === 0 || clipped[block]) continue;
    values[block] = 1 / (1 + Math.exp(logRatio[block]!));
  }
  const map = smoothMap({ values, cols, rows }, 1, clipped);
  // Image-level: the share of textured blocks that look singly compressed.
  return {
    id: 'double-jpeg',
    label: DOUBLE_JPEG_LABEL,
    map,
    peak: quantile(map.values, 0.99),
    area: countAtLeast(map.values, 0.5) / blocks,
    evidence: { doubleCompressed: true, frequencies: perFrequency, clippedBlocks: Math.round((1000 * clipped.reduce((sum, c) => sum + c, 0)) / blocks) / 1000 },
  };
}
