/**
 * Task type 10, audio-splitter: splits the input into a foreground and a background track of
 * the input's length, sample rate and channel count, as 32-bit float WAV, such that
 * foreground + background reconstructs the decoded input (the background is computed as the
 * residual, so the sum is exact up to float rounding).
 *
 * Two methods, chosen per input from what lies between the speech (background-profile.ts):
 * - `speech-denoise`: RNNoise and a Wiener gain guided by Silero VAD (speech-denoise.ts), for
 *   speech over noise;
 * - `repet-sim-hpss`: HPSS (FitzGerald, DAFx 2010) sends percussion to the background, then
 *   REPET-SIM (Rafii & Pardo, ISMIR 2012) separates the repeating part of the harmonic layer
 *   (background) from the non-repeating part (foreground: voice, lead), for music beds.
 * `parameters.method` ('auto' | 'speech-denoise' | 'repet-sim-hpss') overrides the choice;
 * `parameters.encoding` ('float32', default, exact sums | 'pcm16', half the size) sets the WAV
 * sample format.
 */
import { hpssMasks } from './hpss.js';
import { abortIfNeeded, decodeAudio, encodeWavFloat32, encodeWavPcm16, mixDown, probeAudio, resample } from './pcm.js';
import { profileBackground, type BackgroundProfile } from './background-profile.js';
import { repetSimMask } from './repet-sim.js';
import { denoise48k, loadRnnoise, RNNOISE_SAMPLE_RATE } from './rnnoise.js';
import { speechForeground, speechGate } from './speech-denoise.js';
import { istft, magnitude, stft } from './stft.js';
import { detectSpeech, loadVad, speechSegments, VAD_SAMPLE_RATE, type VadResult } from './vad.js';
import { round4 } from '../result.js';
import { MediaError, type Detector, type DetectorInput, type DetectorOutput } from '../types.js';

export const SPLIT_METHODS = ['speech-denoise', 'repet-sim-hpss'] as const;
export type SplitMethod = (typeof SPLIT_METHODS)[number];

const NAME = 'audio-splitter';
const VERSION = '1.1.0';
/**
 * Whitened flatness of non-speech frames below which the background counts as tonal. Measured
 * on generated signals: white, pink and brown noise 0.57–0.60, a chord-and-drums loop 0.39.
 */
const TONAL_FLATNESS = 0.48;
/** Music must be at least this loud relative to the loudest frames to matter (dB). */
const AUDIBLE_BACKGROUND_DB = -35;
/** The music path works on blocks of this length (REPET-SIM looks ±45 s within a block at most). */
const MUSIC_BLOCK_SECONDS = 60;
const MUSIC_OVERLAP_SECONDS = 1;
/** Hysteresis of the VAD whose segments keep the speech foreground at full level. */
const PERMISSIVE_VAD = { onset: 0.2, offset: 0.1 };
/**
 * Longest input the splitter takes: two float tracks of a 10-minute 48 kHz stereo file are
 * ~460 MB on top of the working copies, per job.
 */
export const SPLITTER_MAX_SECONDS = 10 * 60;

export interface MethodChoice {
  method: SplitMethod;
  reason: string;
}

export function chooseMethod(vad: VadResult, profile: BackgroundProfile, requested: unknown): MethodChoice {
  if (typeof requested === 'string' && requested !== 'auto') {
    if (!(SPLIT_METHODS as readonly string[]).includes(requested)) {
      throw new MediaError(`unknown parameters.method '${requested}'; use auto, ${SPLIT_METHODS.join(', ')}`);
    }
    return { method: requested as SplitMethod, reason: 'requested in parameters.method' };
  }
  const tonal =
    profile.nonSpeechFlatness !== null &&
    profile.nonSpeechActiveSeconds >= 0.5 &&
    profile.nonSpeechFlatness < TONAL_FLATNESS &&
    (profile.nonSpeechLevelDb ?? -Infinity) > AUDIBLE_BACKGROUND_DB;
  if (tonal) {
    return {
      method: 'repet-sim-hpss',
      reason: `audio outside speech is tonal (spectral flatness ${profile.nonSpeechFlatness!.toFixed(3)} < ${TONAL_FLATNESS}) and audible: music or another structured background`,
    };
  }
  if (vad.speechSeconds > 0) {
    return {
      method: 'speech-denoise',
      reason: profile.nonSpeechFlatness === null
        ? 'speech found and no audible background between it'
        : `speech found; background between it is noise-like (spectral flatness ${profile.nonSpeechFlatness.toFixed(3)})`,
    };
  }
  return { method: 'speech-denoise', reason: 'no speech found and no tonal background: everything goes to the background track' };
}

/** Foreground per channel by RNNoise at 48 kHz, refined and gated with the VAD (speech-denoise.ts). */
async function speechForegroundTracks(channels: Float32Array[], sampleRate: number, vad: VadResult, signal: AbortSignal): Promise<{ foreground: Float32Array[]; figures: Record<string, number> }> {
  const length = channels[0]!.length;
  if (vad.segments.length === 0) return { foreground: channels.map(() => new Float32Array(length)), figures: { noiseProfileFrames: 0 } };
  // Noise is measured where the strict VAD hears nothing; the foreground is kept wherever a
  // permissive one might hear speech (low-SNR speech falls between the two).
  const gates = {
    noise: speechGate(vad.segments, length, sampleRate),
    output: speechGate(speechSegments(vad.frameProbability, vad.frameSeconds, PERMISSIVE_VAD), length, sampleRate, 0.2),
  };
  const foreground: Float32Array[] = [];
  let noiseFrames = 0;
  for (let c = 0; c < channels.length; c++) {
    // Stereo files often carry the same signal twice: process it once.
    if (c > 0 && identical(channels[c]!, channels[0]!)) {
      foreground.push(foreground[0]!);
      continue;
    }
    abortIfNeeded(signal);
    const at48k = await resample(channels[c]!, sampleRate, RNNOISE_SAMPLE_RATE, signal);
    const { denoised } = await denoise48k(at48k, signal);
    const rnnoiseOutput = await resample(denoised, RNNOISE_SAMPLE_RATE, sampleRate, signal);
    abortIfNeeded(signal);
    const refined = speechForeground(channels[c]!, rnnoiseOutput, gates, sampleRate, signal);
    noiseFrames = refined.noiseFrames;
    foreground.push(refined.foreground);
  }
  return { foreground, figures: { noiseProfileFrames: noiseFrames } };
}

/** Music path in blocks with linear cross-fades, so memory stays bounded on long inputs. */
function musicForeground(channels: Float32Array[], mono: Float32Array, gate: Float32Array, sampleRate: number, signal: AbortSignal): { foreground: Float32Array[]; figures: Record<string, number> } {
  const length = mono.length;
  const blockLength = Math.round(MUSIC_BLOCK_SECONDS * sampleRate);
  const overlap = Math.round(MUSIC_OVERLAP_SECONDS * sampleRate);
  const foreground = channels.map(() => new Float32Array(length));
  const figureSums: Record<string, number> = {};
  let blocks = 0;
  for (let start = 0; start < length; start += blockLength - overlap) {
    const end = Math.min(length, start + blockLength);
    const block = musicForegroundBlock(channels.map((c) => c.subarray(start, end)), mono.subarray(start, end), gate.subarray(start, end), sampleRate, signal);
    const fadeIn = start > 0 ? overlap : 0;
    const fadeOut = end < length ? overlap : 0;
    for (let c = 0; c < channels.length; c++) {
      const target = foreground[c]!;
      const source = block.foreground[c]!;
      for (let i = 0; i < end - start; i++) {
        let weight = 1;
        if (i < fadeIn) weight = i / fadeIn;
        else if (i >= end - start - fadeOut) weight = (end - start - i) / fadeOut;
        target[start + i] = target[start + i]! + weight * source[i]!;
      }
    }
    for (const [key, value] of Object.entries(block.figures)) figureSums[key] = (figureSums[key] ?? 0) + value;
    blocks++;
    if (end === length) break;
  }
  const figures: Record<string, number> = { blocks };
  for (const [key, value] of Object.entries(figureSums)) figures[key] = key === 'fftSize' || key === 'hop' ? value / blocks : round4(value / blocks);
  return { foreground, figures };
}

/**
 * Foreground per channel of one block, masks from the mono mix.
 * - Speech present (`gate` has open stretches): REPET-SIM on the full magnitude, with only
 *   frames outside speech allowed as repetitions, so the median models the bed without the
 *   voice; the speech's own consonants stay in the foreground (HPSS would call them percussive).
 * - No speech: HPSS first, percussion to the background, and REPET-SIM on the harmonic layer;
 *   the foreground is its non-repeating part (a lead line, a singer the VAD does not hear).
 */
function musicForegroundBlock(channels: Float32Array[], mono: Float32Array, gate: Float32Array, sampleRate: number, signal: AbortSignal): { foreground: Float32Array[]; figures: Record<string, number> } {
  // ~46 ms windows at 44.1/48 kHz, ~64 ms at 16 kHz; 75 % overlap.
  const fftSize = sampleRate > 24_000 ? 2048 : 1024;
  const hop = fftSize / 4;
  const mixture = stft(mono, fftSize, hop);
  const mag = magnitude(mixture);
  abortIfNeeded(signal);
  const framesPerSecond = sampleRate / hop;
  const gateAt = (frame: number) => gate[Math.min(gate.length - 1, frame * hop)]!;
  let closedFrames = 0;
  let openFrames = 0;
  for (let t = 0; t < mixture.frames; t++) {
    if (gateAt(t) === 0) closedFrames++;
    else openFrames++;
  }
  const withSpeech = openFrames > 0;
  // Too few speech-free frames to model the bed from: let every frame compete.
  const restrictToSpeechFree = withSpeech && closedFrames >= 0.2 * mixture.frames;
  const foregroundMask = new Float32Array(mag.length);
  let percussiveShare = 0;
  let meanRepeatSimilarity: number;
  if (withSpeech) {
    const repet = repetSimMask(mag, mixture.frames, mixture.bins, {
      framesPerSecond,
      candidate: restrictToSpeechFree ? (frame) => gateAt(frame) === 0 : undefined,
      signal,
    });
    for (let i = 0; i < mag.length; i++) foregroundMask[i] = 1 - repet.backgroundMask[i]!;
    meanRepeatSimilarity = repet.meanRepeatSimilarity;
  } else {
    const { harmonic } = hpssMasks(mag, mixture.frames, mixture.bins, 8, 8, signal);
    const harmonicMag = new Float32Array(mag.length);
    let total = 0;
    for (let i = 0; i < mag.length; i++) {
      harmonicMag[i] = mag[i]! * harmonic[i]!;
      const power = mag[i]! * mag[i]!;
      percussiveShare += power * (1 - harmonic[i]!);
      total += power;
    }
    percussiveShare = total > 0 ? percussiveShare / total : 0;
    abortIfNeeded(signal);
    const repet = repetSimMask(harmonicMag, mixture.frames, mixture.bins, { framesPerSecond, signal });
    for (let i = 0; i < mag.length; i++) foregroundMask[i] = harmonic[i]! * (1 - repet.backgroundMask[i]!);
    meanRepeatSimilarity = repet.meanRepeatSimilarity;
  }
  const foreground = channels.map((channel, c) => {
    abortIfNeeded(signal);
    if (c > 0 && identical(channel, channels[0]!)) return null;
    const track = istft(channel === mono || channels.length === 1 ? mixture : stft(channel, fftSize, hop), foregroundMask);
    if (withSpeech) for (let i = 0; i < track.length; i++) track[i] = track[i]! * gate[i]!;
    return track;
  });
  return {
    foreground: foreground.map((track) => track ?? foreground[0]!),
    figures: {
      fftSize,
      hop,
      meanRepeatSimilarity: round4(meanRepeatSimilarity),
      percussiveEnergyShare: round4(percussiveShare),
      repetitionsFromSpeechFreeFramesOnly: restrictToSpeechFree ? 1 : 0,
      hpssApplied: withSpeech ? 0 : 1,
    },
  };
}

function identical(a: Float32Array, b: Float32Array): boolean {
  for (let i = 0; i < a.length; i += 7) if (Math.abs(a[i]! - b[i]!) > 1e-6) return false;
  return true;
}

/** The background as the residual of the foreground, and each track's level (dBFS), in one pass. */
function residualAndLevels(channels: Float32Array[], foreground: Float32Array[]): { background: Float32Array[]; levelsDbfs: { input: number; foreground: number; background: number } } {
  let input = 0;
  let fore = 0;
  let back = 0;
  const background = channels.map((channel, c) => {
    const residual = new Float32Array(channel.length);
    const fg = foreground[c]!;
    for (let i = 0; i < channel.length; i++) {
      const x = channel[i]!;
      const f = fg[i]!;
      const r = x - f;
      residual[i] = r;
      input += x * x;
      fore += f * f;
      // The level of the stored (float32) residual.
      back += residual[i]! * residual[i]!;
    }
    return residual;
  });
  const count = Math.max(1, channels.length * (channels[0]?.length ?? 0));
  const db = (energy: number) => Math.round(10 * Math.log10(energy / count + 1e-12) * 10) / 10;
  return { background, levelsDbfs: { input: db(input), foreground: db(fore), background: db(back) } };
}

const detector: Detector = {
  name: NAME,
  version: VERSION,

  async load() {
    await Promise.all([loadRnnoise(), loadVad()]);
  },

  async analyze(input: DetectorInput, signal: AbortSignal): Promise<DetectorOutput> {
    const file = input.files.find((f) => f.slotName === 'original') ?? input.files[0];
    if (!file) throw new MediaError('no input file');
    // Checked before any work, so a typo fails fast.
    const encoding = input.parameters.encoding ?? 'float32';
    if (encoding !== 'float32' && encoding !== 'pcm16') throw new MediaError(`unknown parameters.encoding '${String(encoding)}'; use float32 or pcm16`);
    const encode = encoding === 'pcm16' ? encodeWavPcm16 : encodeWavFloat32;
    const started = performance.now();
    // The splitter reads no tags: no stream report.
    const probe = await probeAudio(file.path, signal, SPLITTER_MAX_SECONDS, false);
    const audio = await decodeAudio(file.path, probe, { signal, maxSeconds: SPLITTER_MAX_SECONDS });
    const decodeMs = performance.now() - started;
    abortIfNeeded(signal);

    const mono = mixDown(audio);
    const mono16k = await resample(mono, audio.sampleRate, VAD_SAMPLE_RATE, signal);
    const vad = await detectSpeech(mono16k, { signal });
    const profile = profileBackground(mono16k, vad);
    const choice = chooseMethod(vad, profile, input.parameters.method);
    abortIfNeeded(signal);

    let foreground: Float32Array[];
    let methodFigures: Record<string, number> = {};
    if (choice.method === 'speech-denoise') {
      ({ foreground, figures: methodFigures } = await speechForegroundTracks(audio.channels, audio.sampleRate, vad, signal));
    } else {
      const gate = speechGate(vad.segments, audio.length, audio.sampleRate);
      ({ foreground, figures: methodFigures } = musicForeground(audio.channels, mono, gate, audio.sampleRate, signal));
    }
    const { background, levelsDbfs } = residualAndLevels(audio.channels, foreground);
    abortIfNeeded(signal);

    const durationSeconds = audio.length / audio.sampleRate;
    const result = {
      tracks: { foreground: 'foreground.wav', background: 'background.wav' },
      analysisDetails: {
        detector: { name: NAME, version: VERSION },
        method: choice.method,
        methodReason: choice.reason,
        format: { container: 'wav', encoding: encoding === 'pcm16' ? 'pcm_s16le' : 'pcm_f32le', sampleRate: audio.sampleRate, channels: audio.channels.length, samples: audio.length },
        durationSeconds: round4(durationSeconds),
        speech: { seconds: round4(vad.speechSeconds), segments: vad.segments },
        background: {
          nonSpeechActiveSeconds: round4(profile.nonSpeechActiveSeconds),
          nonSpeechSpectralFlatness: profile.nonSpeechFlatness === null ? null : round4(profile.nonSpeechFlatness),
          nonSpeechLevelDb: profile.nonSpeechLevelDb === null ? null : Math.round(profile.nonSpeechLevelDb * 10) / 10,
        },
        levelsDbfs,
        figures: methodFigures,
        timingsMs: { decode: Math.round(decodeMs), total: Math.round(performance.now() - started) },
        notes: vad.speechSeconds === 0 && choice.method === 'speech-denoise' ? ['no speech found: the foreground track is silent'] : [],
      },
    };
    return {
      result,
      artifacts: [
        { name: 'foreground.wav', kind: 'track', contentType: 'audio/wav', data: encode(foreground, audio.sampleRate) },
        { name: 'background.wav', kind: 'track', contentType: 'audio/wav', data: encode(background, audio.sampleRate) },
      ],
    };
  },
};

export default detector;
