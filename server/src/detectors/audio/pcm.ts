/**
 * Decoding audio files to float PCM with ffmpeg (MP3, WAV, M4A, and whatever else ffmpeg
 * reads), with the checks every audio detector needs: an audio stream exists, the duration
 * is within limits, and the decode actually produced samples.
 */
import { probeMedia, runFfmpeg, type StreamInfo } from '../media/ffmpeg.js';
import { MediaError } from '../types.js';

/** Longest input the audio detectors accept (the task types time out at 600 s of work). */
export const MAX_AUDIO_SECONDS = 15 * 60;

export interface DecodedAudio {
  sampleRate: number;
  /** One Float32Array per channel, samples in [-1, 1]. */
  channels: Float32Array[];
  /** Samples per channel. */
  length: number;
}

export interface AudioProbe extends StreamInfo {
  audio: NonNullable<StreamInfo['audio']>;
  /** ffmpeg's full stream report, kept for metadata and encoder traces. */
  report: string;
}

/**
 * Opens the file, insists on an audio stream and enforces the duration limit. `withReport`
 * false leaves `report` empty and saves a second ffmpeg run, for callers that read no tags.
 */
export async function probeAudio(path: string, signal?: AbortSignal, maxSeconds = MAX_AUDIO_SECONDS, withReport = true): Promise<AudioProbe> {
  const info = await probeMedia(path, signal);
  if (!info.audio) throw new MediaError('the file has no audio stream');
  if (info.durationSeconds !== null && info.durationSeconds > maxSeconds) {
    throw new MediaError(`audio is ${Math.round(info.durationSeconds)} s long; the limit is ${maxSeconds} s`);
  }
  if (!withReport) return { ...info, audio: info.audio, report: '' };
  // probeMedia keeps only parsed facts; the report (tags, encoder) is re-read cheaply here.
  const { stderr } = await runFfmpeg(['-i', path, '-t', '0', '-f', 'null', '-'], { signal });
  return { ...info, audio: info.audio, report: stderr };
}

export interface DecodeOptions {
  /** Resample to this rate; the stream's own rate when omitted. */
  sampleRate?: number;
  /** 1 mixes down to mono; omitted keeps the stream's channels. */
  channels?: number;
  maxSeconds?: number;
  signal?: AbortSignal;
}

/**
 * Decodes the first audio stream to 32-bit float PCM. The byte cap derived from the duration
 * limit stops a file that lies about its length from exhausting memory.
 */
export async function decodeAudio(path: string, probe: AudioProbe, options: DecodeOptions = {}): Promise<DecodedAudio> {
  const sampleRate = options.sampleRate ?? probe.audio.sampleRate;
  const channelCount = options.channels ?? probe.audio.channels;
  const maxSeconds = options.maxSeconds ?? MAX_AUDIO_SECONDS;
  const maxOutputBytes = Math.ceil((maxSeconds + 1) * sampleRate * channelCount * 4);
  const args = ['-i', path, '-map', '0:a:0', '-vn', '-ac', String(channelCount), '-ar', String(sampleRate), '-f', 'f32le', '-acodec', 'pcm_f32le', '-'];
  let stdout: Buffer;
  try {
    ({ stdout } = await runFfmpeg(args, { signal: options.signal, maxOutputBytes }));
  } catch (error) {
    if (error instanceof MediaError && /exceeds/.test(error.message)) {
      throw new MediaError(`audio is longer than the limit of ${maxSeconds} s`);
    }
    throw error;
  }
  const frameBytes = 4 * channelCount;
  const length = Math.floor(stdout.length / frameBytes);
  if (length === 0) throw new MediaError('the audio stream decoded to no samples (truncated or empty file)');
  // Copy into an aligned buffer: Buffer slices may start at an odd offset.
  const interleaved = new Float32Array(length * channelCount);
  new Uint8Array(interleaved.buffer).set(stdout.subarray(0, length * frameBytes));
  // Decoders of broken streams occasionally emit NaN or wild values; keep the math finite.
  const clamp = (value: number) => (Number.isFinite(value) ? Math.max(-4, Math.min(4, value)) : 0);
  if (channelCount === 1) {
    for (let i = 0; i < length; i++) interleaved[i] = clamp(interleaved[i]!);
    return { sampleRate, channels: [interleaved], length };
  }
  const channels = Array.from({ length: channelCount }, () => new Float32Array(length));
  for (let i = 0, k = 0; i < length; i++) {
    for (let c = 0; c < channelCount; c++, k++) {
      channels[c]![i] = clamp(interleaved[k]!);
    }
  }
  return { sampleRate, channels, length };
}

/** Mean of the channels. */
export function mixDown(audio: DecodedAudio): Float32Array {
  if (audio.channels.length === 1) return audio.channels[0]!;
  const mono = new Float32Array(audio.length);
  const scale = 1 / audio.channels.length;
  for (const channel of audio.channels) for (let i = 0; i < audio.length; i++) mono[i] = mono[i]! + channel[i]! * scale;
  return mono;
}

/** Resamples float PCM through ffmpeg (soxr-quality swr defaults are fine for analysis). */
export async function resample(samples: Float32Array, fromRate: number, toRate: number, signal?: AbortSignal): Promise<Float32Array> {
  if (fromRate === toRate) return samples;
  const input = new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength);
  const { stdout } = await runFfmpeg(
    ['-f', 'f32le', '-ar', String(fromRate), '-ac', '1', '-i', 'pipe:0', '-ar', String(toRate), '-f', 'f32le', '-acodec', 'pcm_f32le', '-'],
    { signal, stdin: input },
  );
  const out = new Float32Array(Math.floor(stdout.length / 4));
  new Uint8Array(out.buffer).set(stdout.subarray(0, out.length * 4));
  // Pin the length to the exact ratio so that tracks line up sample for sample.
  const expected = Math.round((samples.length * toRate) / fromRate);
  if (out.length === expected) return out;
  const fitted = new Float32Array(expected);
  fitted.set(out.subarray(0, expected));
  return fitted;
}

/** A RIFF/WAVE header and room for the samples: `format` 3 is IEEE float, 1 is integer PCM. */
function wavBuffer(channelCount: number, length: number, sampleRate: number, format: 1 | 3, bytesPerSample: number): ArrayBuffer {
  const dataBytes = length * channelCount * bytesPerSample;
  const buffer = new ArrayBuffer(44 + dataBytes);
  const view = new DataView(buffer);
  const ascii = (offset: number, text: string) => {
    for (let i = 0; i < text.length; i++) view.setUint8(offset + i, text.charCodeAt(i));
  };
  ascii(0, 'RIFF');
  view.setUint32(4, 36 + dataBytes, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, format, true);
  view.setUint16(22, channelCount, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * channelCount * bytesPerSample, true);
  view.setUint16(32, channelCount * bytesPerSample, true);
  view.setUint16(34, bytesPerSample * 8, true);
  ascii(36, 'data');
  view.setUint32(40, dataBytes, true);
  return buffer;
}

/** A 32-bit float WAV file (WAVE_FORMAT_IEEE_FLOAT), so track sums reconstruct exactly. */
export function encodeWavFloat32(channels: Float32Array[], sampleRate: number): Uint8Array {
  const channelCount = channels.length;
  const length = channels[0]?.length ?? 0;
  const buffer = wavBuffer(channelCount, length, sampleRate, 3, 4);
  const samples = new Float32Array(buffer, 44, length * channelCount);
  if (channelCount === 1) samples.set(channels[0]!);
  else for (let i = 0, k = 0; i < length; i++) for (let c = 0; c < channelCount; c++, k++) samples[k] = channels[c]![i]!;
  return new Uint8Array(buffer);
}

/** A 16-bit PCM WAV file (half the size of float; sums then reconstruct to within 2 LSB). */
export function encodeWavPcm16(channels: Float32Array[], sampleRate: number): Uint8Array {
  const channelCount = channels.length;
  const length = channels[0]?.length ?? 0;
  const buffer = wavBuffer(channelCount, length, sampleRate, 1, 2);
  const samples = new Int16Array(buffer, 44, length * channelCount);
  for (let i = 0, k = 0; i < length; i++) {
    for (let c = 0; c < channelCount; c++, k++) samples[k] = Math.max(-32768, Math.min(32767, Math.round(channels[c]![i]! * 32768)));
  }
  return new Uint8Array(buffer);
}

export function abortIfNeeded(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('analysis aborted');
}
