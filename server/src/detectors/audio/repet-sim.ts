/**
 * REPET-SIM: Z. Rafii and B. Pardo, "Music/Voice Separation using the Similarity Matrix",
 * ISMIR 2012, §2. A repeating background (accompaniment, loops, steady noise) is modelled,
 * frame by frame, as the element-wise median of the frames most similar to it (§2.2, cosine
 * similarity; §2.3, up to k similar frames at least d apart); the model, capped by the mixture,
 * gives a soft time-frequency mask for the background (§2.4).
 *
 * Deviation for long inputs: the paper computes the full similarity matrix, which is quadratic
 * in duration. Here similarity is computed on a compact log-band representation, on every
 * `decimation`-th frame, and only within ±`searchSeconds` of each frame; the median itself is
 * taken over the full-resolution magnitudes.
 */

export interface RepetSimOptions {
  framesPerSecond: number;
  /** Most similar frames kept per frame (k). */
  maxRepeats?: number;
  /** Minimum spacing between chosen frames, in seconds (d). */
  minSpacingSeconds?: number;
  /** Minimum cosine similarity for a frame to count as a repetition (t). */
  minSimilarity?: number;
  searchSeconds?: number;
  /**
   * Per frame, whether it may serve as a repetition. With speech over a bed, only frames the
   * VAD hears no speech in are allowed, so the median models the bed without the voice.
   */
  candidate?: (frame: number) => boolean;
  signal?: AbortSignal;
}

export interface RepetSimResult {
  /** Soft background mask, frame-major; foreground mask = 1 - background. */
  backgroundMask: Float32Array;
  /** Mean similarity of each frame to its chosen repetitions: how repetitive the input is. */
  meanRepeatSimilarity: number;
}

const BANDS = 48;

/** Log-spaced band energies, L2-normalised per frame, for the cosine similarity. */
function bandFeatures(mag: Float32Array, frames: number, bins: number, step: number): { features: Float32Array; rows: number } {
  const rows = Math.ceil(frames / step);
  const features = new Float32Array(rows * BANDS);
  const edges: number[] = [];
  for (let b = 0; b <= BANDS; b++) edges.push(Math.min(bins, Math.round(2 * Math.pow(bins / 2, b / BANDS))));
  for (let r = 0; r < rows; r++) {
    const base = r * step * bins;
    let norm = 0;
    for (let b = 0; b < BANDS; b++) {
      let sum = 0;
      const end = Math.max(edges[b + 1]!, edges[b]! + 1);
      for (let k = edges[b]!; k < end && k < bins; k++) sum += mag[base + k]!;
      const value = Math.log(sum / (end - edges[b]!) + 1e-6);
      features[r * BANDS + b] = value;
      norm += value * value;
    }
    // Remove the frame's mean log level first: otherwise every frame looks alike (cosine ~0.98)
    // and loudness, not spectral shape, drives the choice.
    let mean = 0;
    for (let b = 0; b < BANDS; b++) mean += features[r * BANDS + b]!;
    mean /= BANDS;
    norm = 0;
    for (let b = 0; b < BANDS; b++) {
      const centred = features[r * BANDS + b]! - mean;
      features[r * BANDS + b] = centred;
      norm += centred * centred;
    }
    const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (let b = 0; b < BANDS; b++) features[r * BANDS + b] = features[r * BANDS + b]! * scale;
  }
  return { features, rows };
}

export function repetSimMask(mag: Float32Array, frames: number, bins: number, options: RepetSimOptions): RepetSimResult {
  const maxRepeats = options.maxRepeats ?? 16;
  const minSimilarity = options.minSimilarity ?? 0;
  const decimation = Math.max(1, Math.round(options.framesPerSecond / 20)); // ~20 similarity rows per second
  const rowsPerSecond = options.framesPerSecond / decimation;
  const minSpacingRows = Math.max(1, Math.round((options.minSpacingSeconds ?? 1) * rowsPerSecond));
  const searchRows = Math.round((options.searchSeconds ?? 45) * rowsPerSecond);
  const { features, rows } = bandFeatures(mag, frames, bins, decimation);

  // For each row: the most similar other rows, greedily, at least minSpacingRows apart.
  const repeatsOfRow: Int32Array[] = [];
  let similaritySum = 0;
  let similarityCount = 0;
  const similarity = new Float32Array(2 * searchRows + 1);
  const order: number[] = [];
  for (let r = 0; r < rows; r++) {
    if (r % 256 === 0 && options.signal?.aborted) throw options.signal.reason ?? new Error('aborted');
    const low = Math.max(0, r - searchRows);
    const high = Math.min(rows - 1, r + searchRows);
    order.length = 0;
    for (let s = low; s <= high; s++) {
      if (options.candidate && s !== r && !options.candidate(s * decimation)) continue;
      let dot = 0;
      for (let b = 0; b < BANDS; b++) dot += features[r * BANDS + b]! * features[s * BANDS + b]!;
      similarity[s - low] = dot;
      order.push(s);
    }
    order.sort((a, b) => similarity[b - low]! - similarity[a - low]!);
    const chosen: number[] = [];
    for (const s of order) {
      if (chosen.length >= maxRepeats) break;
      if (similarity[s - low]! < minSimilarity) break;
      // The frame itself is a valid member of its own repetition set (§2.3 keeps j).
      if (chosen.every((c) => Math.abs(c - s) >= minSpacingRows)) {
        chosen.push(s);
        if (s !== r) {
          similaritySum += similarity[s - low]!;
          similarityCount++;
        }
      }
    }
    repeatsOfRow.push(Int32Array.from(chosen));
  }

  // Repeating model: per bin, the median of the magnitudes at the chosen frames (§2.4).
  const backgroundMask = new Float32Array(mag.length);
  const values = new Float64Array(maxRepeats);
  for (let t = 0; t < frames; t++) {
    if (t % 1024 === 0 && options.signal?.aborted) throw options.signal.reason ?? new Error('aborted');
    const repeats = repeatsOfRow[Math.min(rows - 1, Math.floor(t / decimation))]!;
    const offset = t % decimation;
    const count = repeats.length;
    for (let k = 0; k < bins; k++) {
      for (let i = 0; i < count; i++) values[i] = mag[Math.min(frames - 1, repeats[i]! * decimation + offset) * bins + k]!;
      const median = medianOf(values, count);
      const mixture = mag[t * bins + k]!;
      // The background cannot exceed the mixture (§2.4): W = min(W, V), mask = W / V.
      backgroundMask[t * bins + k] = mixture > 1e-12 ? Math.min(median, mixture) / mixture : 1;
    }
  }
  return { backgroundMask, meanRepeatSimilarity: similarityCount ? similaritySum / similarityCount : 0 };
}

function medianOf(values: Float64Array, count: number): number {
  const view = values.subarray(0, count).sort();
  return count % 2 ? view[(count - 1) >> 1]! : (view[count / 2 - 1]! + view[count / 2]!) / 2;
}
