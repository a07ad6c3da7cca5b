/**
 * Task type 2, ai-audio-detection: is the speech in this file synthetic (TTS, voice cloning)?
 *
 * Evidence, strongest first:
 * 1. C2PA content credentials that declare trained-model output (or a capture), validated
 *    offline (audio-provenance.ts): decisive when present and valid.
 * 2. Container tags naming a known speech generator (audio-provenance.ts).
 * 3. Signal cues measured over the speech Silero VAD finds (speech-cues.ts): the band limit of
 *    a vocoder's native rate, digital-silence floors between phrases; envelope modulation and
 *    bicoherence statistics are measured and reported but carry no weight, because no labelled
 *    corpus here is large enough to calibrate them (a model pack can).
 * 4. The built-in learned model `speech-antispoof` (speech-model.ts; LFCC + CNN trained in
 *    training/speech/ with whole TTS systems held out), scored per 4 s window of speech; its
 *    window scores fill the `segments` timeline. Without a decisive credential or generator tag
 *    its calibrated probability decides, against thresholds chosen on held-out systems:
 *    `inconclusive` between them or when the fused cues point the other way.
 * 5. Operator model packs (model-pack.ts), fused in log-odds.
 *
 * Without the model (removed or broken) the built-in cues are heuristics: the verdict stays
 * `inconclusive` unless the evidence is clearly one-sided.
 */
import { abortIfNeeded, decodeAudio, probeAudio, resample } from './pcm.js';
import { mimeForContainer, readAudioC2pa, readTags } from './audio-provenance.js';
import { loadModel, loadOperatorPacks, runWaveformModel, type ModelDescriptor, type WaveformInput } from '../model-pack.js';
import { scoreSpeech, SPEECH_MODEL_NAME, type SpeechModelOutcome } from './speech-model.js';
import { measureBandLimit, measureBicoherence, measureSilenceFloor, measureVoiced, type BandLimit, type SilenceFloor } from './speech-cues.js';
import { detectSpeech, loadVad, VAD_SAMPLE_RATE, type SpeechSegment } from './vad.js';
import { initC2pa } from '../image/c2pa.js';
import { logOdds, round4, sigmoid, verdictResult } from '../result.js';
import { MediaError, type Detector, type DetectorInput, type DetectorOutput, type Signal } from '../types.js';

const NAME = 'ai-audio-detection';
const VERSION = '1.0.0';
const TASK = 'ai-audio-detection';
/** Less speech than this and no signal cue is meaningful. */
const MIN_SPEECH_SECONDS = 1;
/** Fused scores closer to 0.5 than this are reported as inconclusive. */
const INCONCLUSIVE_MARGIN = 0.15;
/** Native rates of common neural vocoders / TTS outputs: 16, 22.05 and 24 kHz (Nyquist 8–12 kHz). */
const VOCODER_BAND = { lowHz: 7_500, highHz: 12_500 };
/** LAME and AAC encoders low-pass below ~12 kHz only at bitrates under ~64 kb/s per channel. */
const LOW_BITRATE_PER_CHANNEL_KBPS = 64;
/** Log-odds weight of the learned model against each heuristic cue (weight 1). */
const MODEL_WEIGHT = 2;

/**
 * The model's decision thresholds for this file. Lossy coding moves real speech towards the
 * synthetic side, by codec and bitrate, so a file of a lossy codec the descriptor measured (up to
 * the highest bitrate it measured) is judged by the thresholds chosen on the validation clips encoded
 * with it (scripts/fit-speech-codec-thresholds.ts); every other file by the validation thresholds.
 * Below the model's own sample rate (telephone band) only a rate the validation clips were
 * resampled to has thresholds; at any other there are none, and the model does not decide.
 */
function decisionThresholds(descriptor: ModelDescriptor, codec: string, kbpsPerChannel: number | null, sampleRate: number) {
  if (sampleRate < (descriptor.input as WaveformInput).sampleRate) {
    const narrowband = descriptor.narrowbandThresholds;
    if (!narrowband?.sampleRates.includes(sampleRate)) return null;
    return { authentic: narrowband.authentic, manipulated: narrowband.manipulated, chosenFor: `sampled at ${sampleRate} Hz: thresholds chosen on the validation clips resampled to ${narrowband.sampleRates.join(', ')} Hz as telephone audio` };
  }
  const measured = kbpsPerChannel === null ? undefined : descriptor.codecThresholds?.find((t) => t.codec === codec && kbpsPerChannel <= t.maxKbpsPerChannel);
  if (measured) {
    return { authentic: measured.authentic, manipulated: measured.manipulated, chosenFor: `${codec} at ${Math.round(kbpsPerChannel!)} kb/s per channel: thresholds chosen on the validation clips encoded with ${codec} at up to ${measured.maxKbpsPerChannel} kb/s` };
  }
  return { ...(descriptor.thresholds ?? { authentic: 0.5, manipulated: 0.5 }), chosenFor: 'thresholds chosen on the validation split' };
}

function bandLimitSignal(band: BandLimit | null, bitrateKbps: number | null, perChannel: number | null): Signal {
  const base = { id: 'band-limit', label: 'Band limit of the speech (vocoder sample rate)' };
  if (!band) return { ...base, score: null, weight: 0, evidence: { reason: 'too little speech to measure a long-term spectrum' } };
  if (band.nyquistHz < 15_000) {
    return { ...base, score: null, weight: 0, evidence: { ...band, reason: `the file itself is sampled at ${band.nyquistHz * 2} Hz, so a vocoder's band limit cannot show` } };
  }
  const codecMayExplain = perChannel !== null && perChannel < LOW_BITRATE_PER_CHANNEL_KBPS;
  const inVocoderBand = band.cutoffHz >= VOCODER_BAND.lowHz && band.cutoffHz <= VOCODER_BAND.highHz && band.edgeDropDb >= 25;
  if (inVocoderBand) {
    return {
      ...base,
      score: codecMayExplain ? 0.6 : 0.8,
      weight: 1,
      evidence: {
        ...band,
        bitrateKbps,
        reason: `speech stops sharply at ${band.cutoffHz} Hz in a file that could carry ${band.nyquistHz} Hz, as speech generated at 16–24 kHz and resampled does` +
          (codecMayExplain ? `; at ${Math.round(perChannel!)} kb/s per channel the encoder's low-pass may also explain it` : ''),
      },
    };
  }
  if (band.cutoffHz < VOCODER_BAND.lowHz) {
    return { ...base, score: null, weight: 0, evidence: { ...band, reason: 'narrow-band speech (telephone or heavy filtering): the cue does not apply' } };
  }
  return { ...base, score: 0.3, weight: 1, evidence: { ...band, reason: `speech extends to ${band.cutoffHz} Hz, above vocoder rates` } };
}

function silenceSignal(floor: SilenceFloor): Signal {
  const base = { id: 'silence-floor', label: 'Noise floor between phrases (digital silence)' };
  if (floor.floorDbfs === null || floor.nonSpeechSeconds < 0.5) {
    return { ...base, score: null, weight: 0, evidence: { ...floor, reason: 'too little non-speech audio to measure a floor' } };
  }
  // A microphone chain never reaches −90 dBFS; exact zeros come from synthesis or editing.
  // Capped at 0.75: noise gates and edited podcasts make digital silence too, so this cue
  // alone tips the verdict but is outvoted by full-band speech (then inconclusive).
  let score = 0.2 + 0.55 * sigmoid((-floor.floorDbfs - 85) / 3);
  if (floor.digitalSilenceShare >= 0.05) score = Math.max(score, 0.75);
  const reason =
    floor.digitalSilenceShare >= 0.05
      ? `${Math.round(floor.digitalSilenceShare * 100)} % of the pauses are digital silence (below −90 dBFS), typical of synthesis (also of heavy editing or noise gates)`
      : floor.floorDbfs > -75
        ? `pauses carry a recording noise floor (${floor.floorDbfs} dBFS)`
        : `pauses are very quiet (${floor.floorDbfs} dBFS): processed or studio audio`;
  return { ...base, score: round4(score), weight: 1, evidence: { ...floor, reason } };
}

async function analyze(input: DetectorInput, signal: AbortSignal): Promise<DetectorOutput> {
  const file = input.files.find((f) => f.slotName === 'original') ?? input.files[0];
  if (!file) throw new MediaError('no input file');
  const started = performance.now();
  const probe = await probeAudio(file.path, signal);
  const tags = readTags(probe.report);
  const audio = await decodeAudio(file.path, probe, { channels: 1, signal });
  abortIfNeeded(signal);
  const mono = audio.channels[0]!;
  const mono16k = await resample(mono, audio.sampleRate, VAD_SAMPLE_RATE, signal);
  const vad = await detectSpeech(mono16k, { signal });
  abortIfNeeded(signal);

  const signals: Signal[] = [];
  const notes: string[] = [];

  // 1. C2PA.
  const c2pa = await readAudioC2pa(file.path, mimeForContainer(tags.container), input.c2paTrustAnchors ?? null);
  const c2paValid = c2pa.status === 'present' && c2pa.failures.length === 0;
  // A capture claim counts only under a trusted signer (anyone can sign one); an AI declaration always does.
  const c2paCredible = c2pa.status === 'present' && (c2pa.declares === 'ai' || (c2pa.declares === 'capture' && c2pa.signerTrusted));
  signals.push({
    id: 'c2pa',
    label: 'C2PA content credentials',
    score: c2pa.status !== 'present' || !c2pa.declares ? null : c2pa.declares === 'ai' ? 0.99 : 0.1,
    weight: c2paCredible ? (c2paValid ? 4 : 1) : 0,
    evidence: c2pa.status === 'absent'
      ? { status: 'absent', reason: 'no C2PA manifest in the file' }
      : { ...c2pa, ...(c2pa.declares === 'capture' && !c2pa.signerTrusted && { note: 'a capture claim whose signer is not under a trust anchor (C2PA_TRUST_ANCHORS): reported, not weighed' }) },
  });

  // 2. Tags and encoder traces.
  signals.push({
    id: 'generator-tags',
    label: 'Tags naming a speech generator',
    score: tags.generatorMatches.length ? 0.95 : null,
    weight: tags.generatorMatches.length ? 2 : 0,
    evidence: tags.generatorMatches.length
      ? { matches: tags.generatorMatches }
      : { reason: 'no tag names a known generator (tags are easily removed, so their absence says little)', tags: tags.tags },
  });
  signals.push({
    id: 'encoder-trace',
    label: 'Encoder traces',
    score: null,
    weight: 0,
    evidence: {
      container: tags.container,
      encoders: tags.encoders,
      bitrateKbps: tags.bitrateKbps,
      reason: 'reported for the examiner; encoders say how the file was written, not where the voice came from',
    },
  });

  // 3. Signal cues over the speech.
  const speechFound = vad.speechSeconds >= MIN_SPEECH_SECONDS;
  const voiced = speechFound ? measureVoiced(mono16k, vad.segments) : null;
  const bicoherence = speechFound ? measureBicoherence(mono16k, vad.segments) : null;
  abortIfNeeded(signal);
  const kbpsPerChannel = tags.bitrateKbps === null ? null : tags.bitrateKbps / Math.max(1, probe.audio.channels);
  if (speechFound) {
    signals.push(bandLimitSignal(measureBandLimit(mono, audio.sampleRate, vad.segments), tags.bitrateKbps, kbpsPerChannel));
    signals.push(silenceSignal(measureSilenceFloor(mono, audio.sampleRate, vad.segments)));
  } else {
    notes.push(vad.speechSeconds === 0 ? 'no speech found in the audio' : `only ${vad.speechSeconds.toFixed(2)} s of speech found`);
    if (vad.steadySeconds > 0) notes.push(`${vad.steadySeconds.toFixed(2)} s of steady sound (a tone or hum whose level does not move, or notes whose pitch is held) is not speech`);
  }
  signals.push({
    id: 'voiced-statistics',
    label: 'Spectral flatness and envelope modulation over speech',
    score: null,
    weight: 0,
    evidence: voiced
      ? { ...roundAll(voiced), reason: 'reported, not weighted: natural speech carries more fast (> 16 Hz) envelope modulation than vocoded speech, but the threshold needs calibration on labelled data' }
      : { reason: 'too little speech' },
  });
  signals.push({
    id: 'bicoherence',
    label: 'Bispectral (bicoherence) statistics',
    score: null,
    weight: 0,
    evidence: bicoherence
      ? { frames: bicoherence.frames, magnitude: roundAll(bicoherence.magnitude), phase: roundAll(bicoherence.phase), reason: 'reported, not weighted: AlBadawy et al. classify these moments with a trained model; none is shipped' }
      : { reason: 'too little speech' },
  });

  // 4. The built-in synthetic-speech model over the speech windows.
  const builtIn = await loadModel(SPEECH_MODEL_NAME, input.modelsDir);
  for (const problem of builtIn.problems) notes.push(`model ${problem.file} not used: ${problem.problem}`);
  const speechModel = builtIn.model;
  let modelOutcome: SpeechModelOutcome | null = null;
  const thresholds = speechModel ? decisionThresholds(speechModel.descriptor, probe.audio.codec, kbpsPerChannel, audio.sampleRate) : null;
  if (speechModel && speechFound) {
    modelOutcome = await scoreSpeech(speechModel, mono16k, VAD_SAMPLE_RATE, vad.segments, signal);
    const d = speechModel.descriptor;
    const figures = (d.training?.figures ?? null) as Record<string, unknown> | null;
    signals.push({
      id: `model:${d.name}`,
      label: `Learned synthetic-speech model ${d.name} ${d.version} (LFCC + CNN)`,
      score: modelOutcome ? round4(modelOutcome.probability) : null,
      weight: modelOutcome ? MODEL_WEIGHT : 0,
      evidence: modelOutcome
        ? {
            windows: modelOutcome.windows.length,
            windowSeconds: modelOutcome.windowSeconds,
            thresholds: thresholds && { authentic: thresholds.authentic, manipulated: thresholds.manipulated },
            thresholdsChosenFor: thresholds?.chosenFor,
            ...(figures && { heldOutSystemEer: figures.heldOutEer }),
            ...(typeof d.training?.split === 'string' && { split: d.training.split }),
            reason: `probability from a model trained on real and synthetic speech of many TTS and vocoder systems, ${d.calibration ? `${d.calibration.method}-calibrated` : 'uncalibrated'} on its validation split`,
          }
        : { reason: 'no speech samples to score' },
    });
  } else if (speechModel) {
    notes.push('the synthetic-speech model needs at least 1 s of speech');
  }

  // 5. Operator model packs, run over the concatenated speech at each model's rate.
  const packs = await loadOperatorPacks(TASK, 'waveform', input.modelsDir);
  for (const problem of packs.problems) notes.push(`model pack ${problem.file} skipped: ${problem.problem}`);
  if (speechFound && packs.models.length) {
    const speech16k = concatenateSpeech(mono16k, VAD_SAMPLE_RATE, vad.segments);
    for (const model of packs.models) {
      abortIfNeeded(signal);
      const modelInput = model.descriptor.input as WaveformInput;
      const speech = await resample(speech16k, VAD_SAMPLE_RATE, modelInput.sampleRate, signal);
      const outcome = await runWaveformModel(model, speech);
      signals.push({
        id: `model:${model.descriptor.name}`,
        label: `Model pack ${model.descriptor.name} ${model.descriptor.version}`,
        score: outcome ? round4(outcome.probability) : null,
        weight: outcome ? (model.descriptor.weight ?? 1) : 0,
        evidence: outcome ? { windows: outcome.windows, seconds: modelInput.seconds } : { reason: 'too little speech for one window' },
      });
    }
  }

  // Fusion: weighted log-odds from a neutral prior.
  const weighted = signals.filter((s) => s.score !== null && s.weight > 0);
  const combined = weighted.reduce((sum, s) => sum + s.weight * logOdds(s.score!), 0);
  const score = weighted.length ? sigmoid(combined) : 0.5;
  const decisiveCredential = c2paCredible && c2paValid;
  let inconclusive = !decisiveCredential && (!speechFound || weighted.length === 0 || Math.abs(score - 0.5) < INCONCLUSIVE_MARGIN);
  // Without provenance or tags the model decides, at thresholds from its validation split.
  const modelDecides = !decisiveCredential && tags.generatorMatches.length === 0 && modelOutcome !== null && speechFound;
  if (modelDecides && thresholds === null) {
    // A rate below the model's that its validation clips were never resampled to: it reports, names no thresholds, and does not decide.
    inconclusive = true;
    const modelRate = (speechModel!.descriptor.input as WaveformInput).sampleRate;
    notes.push(`the file is sampled at ${audio.sampleRate} Hz, below the ${modelRate} Hz the model's thresholds were chosen at, and at no rate its telephone-band thresholds were chosen at: its probability is reported, not decided on: inconclusive`);
  } else if (modelDecides) {
    const p = modelOutcome!.probability;
    const call = p >= thresholds!.manipulated ? true : p <= thresholds!.authentic ? false : null;
    inconclusive = call === null || call !== score >= 0.5;
    if (call === null) notes.push(`the model's probability ${round4(p)} lies between its thresholds (${thresholds!.authentic}, ${thresholds!.manipulated}): inconclusive`);
    else if (inconclusive) notes.push('the model and the signal cues point different ways: inconclusive');
  }
  if (!speechFound && !decisiveCredential) notes.push('without speech the synthetic-speech cues do not apply: inconclusive');

  const segments = describeSegments(mono16k, vad.segments).map((segment, k) => {
    const p = modelOutcome?.segmentProbabilities[k];
    return p === undefined || p === null ? segment : { ...segment, syntheticProbability: round4(p) };
  });
  return {
    result: verdictResult({
      flag: 'isAiGenerated',
      detector: { name: NAME, version: VERSION },
      score,
      inconclusive,
      ...(decisiveCredential && { confidence: c2pa.signerTrusted ? 0.99 : 0.9 }),
      signals,
      details: {
        basis: decisiveCredential
          ? 'C2PA content credentials'
          : tags.generatorMatches.length
            ? 'tags naming a speech generator, fused with the other evidence'
            : modelDecides
              ? 'learned synthetic-speech model at thresholds chosen on its validation clips (for lossy files, encoded with the same codec), fused with signal cues'
              : packs.models.length
            ? 'signal cues fused with operator model packs'
            : 'signal cues only (heuristic, not a trained classifier)',
        audio: { container: tags.container, codec: probe.audio.codec, sampleRate: probe.audio.sampleRate, channels: probe.audio.channels, durationSeconds: round4(audio.length / audio.sampleRate) },
        speechSeconds: round4(vad.speechSeconds),
        segments,
        ...(modelOutcome && { modelWindows: modelOutcome.windows.map((w) => ({ ...w, probability: round4(w.probability) })) }),
        modelPacks: packs.models.map((m) => ({ name: m.descriptor.name, version: m.descriptor.version })),
        notes,
        timingsMs: { total: Math.round(performance.now() - started) },
      },
    }),
  };
}

function concatenateSpeech(samples: Float32Array, sampleRate: number, segments: readonly SpeechSegment[]): Float32Array {
  const pieces = segments.map((s) => samples.subarray(Math.floor(s.start * sampleRate), Math.min(samples.length, Math.ceil(s.end * sampleRate))));
  const out = new Float32Array(pieces.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const piece of pieces) {
    out.set(piece, offset);
    offset += piece.length;
  }
  return out;
}

/** The timeline: each speech segment with its level and its own flatness/modulation figures. */
function describeSegments(samples16k: Float32Array, segments: readonly SpeechSegment[]) {
  return segments.map((segment) => {
    const start = Math.floor(segment.start * VAD_SAMPLE_RATE);
    const end = Math.min(samples16k.length, Math.ceil(segment.end * VAD_SAMPLE_RATE));
    let energy = 0;
    for (let i = start; i < end; i++) energy += samples16k[i]! * samples16k[i]!;
    const voiced = measureVoiced(samples16k, [segment]);
    return {
      start: segment.start,
      end: segment.end,
      speechProbability: segment.probability,
      levelDbfs: Math.round(10 * Math.log10(energy / Math.max(1, end - start) + 1e-12) * 10) / 10,
      ...(voiced && { spectralFlatness: round4(voiced.flatnessMean), fastModulationShare: round4(voiced.fastModulationShare) }),
    };
  });
}

function roundAll<T extends object>(values: T): Record<string, number> {
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [key, typeof value === 'number' ? round4(value) : value]));
}

const detector: Detector = {
  name: NAME,
  version: VERSION,
  async load() {
    initC2pa();
    await loadVad();
  },
  analyze,
};

export default detector;
