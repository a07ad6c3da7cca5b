/**
 * Harmonic/percussive separation by median filtering: D. FitzGerald, "Harmonic/Percussive
 * Separation using Median Filtering", DAFx 2010, §2–3. Harmonic partials are smooth along
 * time and percussive onsets are smooth along frequency, so a median across time enhances the
 * first and a median across frequency the second; the two enhanced spectrograms give soft
 * (Wiener-like, §3 eq. 4 with p = 2) masks.
 */

/** Median of a sliding window over `length` values read with `read(i)`, written with `write`. */
function slidingMedian(length: number, radius: number, read: (i: number) => number, write: (i: number, value: number) => void): void {
  // A sorted window updated by one removal and one insertion per step: O(radius) per output.
  const window: number[] = [];
  // Index of the first element not below `value` (binary search).
  const lowerBound = (value: number) => {
    let low = 0;
    let high = window.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (window[mid]! < value) low = mid + 1;
      else high = mid;
    }
    return low;
  };
  const insert = (value: number) => window.splice(lowerBound(value), 0, value);
  const remove = (value: number) => window.splice(lowerBound(value), 1);
  // Edges are padded with zeros, as the paper's filters see silence beyond the signal.
  for (let i = -radius; i <= radius; i++) insert(i >= 0 && i < length ? read(i) : 0);
  for (let i = 0; i < length; i++) {
    write(i, window[radius]!);
    const leaving = i - radius;
    const entering = i + radius + 1;
    remove(leaving >= 0 ? read(leaving) : 0);
    insert(entering < length ? read(entering) : 0);
  }
}

export interface HpssMasks {
  /** Soft masks, frame-major like the spectrogram; harmonic + percussive = 1. */
  harmonic: Float32Array;
  percussive: Float32Array;
}

/**
 * `timeRadius` and `frequencyRadius` are half the median lengths (the paper uses 17 bins for
 * both at a 4096-point FFT; at 2048 points we keep ~0.2 s along time and ~350 Hz along frequency).
 */
export function hpssMasks(mag: Float32Array, frames: number, bins: number, timeRadius = 8, frequencyRadius = 8, signal?: AbortSignal): HpssMasks {
  const harmonicEnhanced = new Float32Array(mag.length);
  const percussiveEnhanced = new Float32Array(mag.length);
  for (let k = 0; k < bins; k++) {
    if (k % 64 === 0 && signal?.aborted) throw signal.reason ?? new Error('aborted');
    slidingMedian(frames, timeRadius, (t) => mag[t * bins + k]!, (t, v) => (harmonicEnhanced[t * bins + k] = v));
  }
  for (let t = 0; t < frames; t++) {
    if (t % 512 === 0 && signal?.aborted) throw signal.reason ?? new Error('aborted');
    const base = t * bins;
    slidingMedian(bins, frequencyRadius, (k) => mag[base + k]!, (k, v) => (percussiveEnhanced[base + k] = v));
  }
  const harmonic = new Float32Array(mag.length);
  const percussive = new Float32Array(mag.length);
  for (let i = 0; i < mag.length; i++) {
    const h2 = harmonicEnhanced[i]! ** 2;
    const p2 = percussiveEnhanced[i]! ** 2;
    const total = h2 + p2;
    harmonic[i] = total > 0 ? h2 / total : 0.5;
    percussive[i] = 1 - harmonic[i]!;
  }
  return { harmonic, percussive };
}
