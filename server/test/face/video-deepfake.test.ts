import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import ekyc from '../../src/detectors/face/ekyc-deepfake.js';
import faceswap from '../../src/detectors/face/faceswap-detection.js';
import { runFfmpeg } from '../../src/detectors/media/ffmpeg.js';
import { loadFaceForgeryModel } from '../../src/detectors/face/face-forgery.js';
import { scoreColour } from '../../src/detectors/face/heatmap-video.js';
import { taskTypeBySlug } from '../../src/detectors/catalogue.js';
import type { Detector } from '../../src/detectors/types.js';
import { round4 } from '../../src/detectors/result.js';
import { resultProblem } from '../../src/schemas/result.schema.js';
import { withSdkFields } from '../../src/services/sdk-result-fields.js';
import { ONE_FACE, fileOf, flickerClip, inputOf, noAbort, operatorPack, scratchDir, stillClip } from './helpers.js';

type Result = {
  score: number;
  confidence: number;
  verdict: string;
  isDeepFake: boolean;
  analysisDetails: {
    signals: Array<{ id: string; score: number | null; weight: number; evidence: unknown }>;
    participants: Array<{ id: number; fake: boolean; framesSeen: number; faceForgery?: { probability: number; framesScored: number; decision: string; decides: boolean } }>;
    faces: number;
    deepFakes: number;
    verification?: { isSimilar: boolean | null; similarity: number | null };
  };
};

interface TrackPoint { timeSeconds: number; box: number[]; score: number | null; identityScore: number | null; forgeryProbability?: number | null }
interface Participant {
  fake: boolean;
  verdict: string;
  score: number | null;
  confidence: number | null;
  identityScore: number | null;
  track: TrackPoint[];
  decisiveFrames: Array<{ timeSeconds: number; frameIndex: number; score: number; by: string }>;
}

let dir: string;
let steady: string;
let flicker: string;
const analyse = (detector: Detector, video: string, reference?: string) =>
  detector.analyze(
    inputOf(detector.name, [fileOf(video, 'original', 'video/mp4'), ...(reference ? [fileOf(reference, 'reference')] : [])], {
      maxFrames: 5,
    }),
    noAbort(),
  );
const run = async (detector: Detector, video: string, reference?: string) =>
  (await analyse(detector, video, reference)).result as unknown as Result;

interface ModelEvidence {
  citation: string;
  validationAuc: number;
  thresholds: { authentic: number; manipulated: number };
  decides: boolean;
  participants: Array<{ id: number; framesScored: number; probability: number; decision: string }>;
}
/**
 * The verdict the rules give a clip with no identity break, spoof or injection tool: the model
 * decides only when its validation AUC allows it; otherwise the video is never cleared.
 */
function expectModelRule(result: Result, evidence: ModelEvidence, live = true) {
  const decision = evidence.participants[0]!.decision;
  if (evidence.decides && decision === 'manipulated') {
    assert.equal(result.verdict, 'manipulated');
    assert.equal(result.analysisDetails.participants[0]!.fake, true);
  } else if (evidence.decides && decision === 'authentic' && live) {
    assert.equal(result.verdict, 'authentic');
    assert.equal(result.isDeepFake, false);
  } else {
    assert.equal(result.verdict, 'inconclusive', 'without a deciding model the evidence never clears a video');
    assert.equal(result.isDeepFake, false);
    assert.ok(result.confidence <= 0.3);
    assert.equal(result.analysisDetails.participants[0]!.fake, false);
  }
}

/** The face-forgery model's signal, which every result with a face carries. */
function modelSignal(result: Result) {
  const signal = result.analysisDetails.signals.find((s) => s.id === 'model:face-forgery-sbi');
  assert.ok(signal, 'the face-forgery model signal is present');
  return { ...signal, evidence: signal.evidence as ModelEvidence };
}

before(async () => {
  dir = await scratchDir();
  await faceswap.load();
  steady = await stillClip(dir, ONE_FACE, 'steady.mp4', 3);
  flicker = await flickerClip(dir);
});

test('faceswap: a steady real face carries the face-forgery model signal per participant, within the result schema', async () => {
  const { model } = await loadFaceForgeryModel(null);
  assert.ok(model, 'the built-in face-forgery model loads');
  const result = await run(faceswap, steady);
  assert.equal(result.analysisDetails.faces, 1);
  assert.equal(result.analysisDetails.participants[0]!.framesSeen, 5);
  const signal = modelSignal(result);
  assert.match(signal.evidence.citation, /Shiohara/);
  assert.equal(signal.evidence.participants[0]!.framesScored, 5);
  assert.equal(signal.score, signal.evidence.participants[0]!.probability);
  assert.equal(signal.evidence.validationAuc, (model.descriptor.training as { figures: { valAuc: number } }).figures.valAuc);
  assert.deepEqual(signal.evidence.thresholds, model.descriptor.thresholds);
  const participant = result.analysisDetails.participants[0]!;
  assert.equal(participant.faceForgery?.framesScored, 5);
  assert.equal(signal.evidence.decides, signal.evidence.validationAuc >= 0.85 && model.descriptor.weight > 0);
  assert.equal(signal.weight > 0, signal.evidence.decides);
  expectModelRule(result, signal.evidence);
  const taskType = taskTypeBySlug('faceswap-detection')!;
  assert.equal(resultProblem(taskType.result, withSdkFields(taskType, result as never)), null);
});

test('faceswap: a face swapped in one frame is caught, with the fake participant named', async () => {
  const output = await analyse(faceswap, flicker);
  const result = output.result as unknown as Result;
  const participant = result.analysisDetails.participants[0] as { artifact?: string };
  const crop = output.artifacts?.find((artifact) => artifact.name === participant.artifact);
  assert.equal(crop?.kind, 'frame');
  assert.deepEqual([...crop!.data.subarray(0, 2)], [0xff, 0xd8], 'a JPEG face crop per participant');
  assert.equal(result.verdict, 'manipulated');
  assert.equal(result.isDeepFake, true);
  assert.ok(result.score >= 0.5);
  assert.equal(result.analysisDetails.deepFakes, 1);
  assert.equal(result.analysisDetails.participants.filter((p) => p.fake).length, 1);

  // The participant's heatmap video: playable H.264, the face outlined in the colour of each
  // frame's score (the stronger of the identity break and the deciding model's probability),
  // so the swapped frame (2-3 s) is redder than the frames around it.
  const fake = result.analysisDetails.participants.find((p) => p.fake) as unknown as { heatmap: string; track: TrackPoint[] };
  const heatmap = output.artifacts!.find((artifact) => artifact.name === fake.heatmap)!;
  assert.equal(heatmap.kind, 'heatmap');
  assert.equal(heatmap.contentType, 'video/mp4');
  assert.equal(fake.track.length, 5);
  const path = join(dir, 'heatmap.mp4');
  await writeFile(path, heatmap.data);
  const { stderr } = await runFfmpeg(['-i', path, '-f', 'null', '-']);
  assert.match(stderr, /Video: h264/);
  assert.ok(Number(/frame=\s*(\d+)/.exec(stderr)![1]) >= 45, 'about 10 fps over 5 s');
  const scale = 480 / 564; // the clip is 800x564; the heatmap has 480 lines
  const outline = async (seconds: number, [x, y, , h]: number[]) => {
    const { stdout } = await runFfmpeg(['-ss', String(seconds), '-i', path, '-frames:v', '1', '-vf', `format=rgb24,crop=1:1:${Math.round(x! * scale) + 1}:${Math.round((y! + h! / 2) * scale)}`, '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1']);
    return [...stdout.subarray(0, 3)];
  };
  const [swap, clean] = [fake.track[2]!, fake.track[0]!];
  assert.ok(swap.identityScore! > 0.5 && clean.identityScore! < 0.1, JSON.stringify(fake.track));
  assert.ok(swap.score! > clean.score! + 0.2, JSON.stringify(fake.track));
  for (const [seconds, point] of [[2.5, swap], [0.5, clean]] as const) {
    const [red, green] = await outline(seconds, point.box);
    const expected = scoreColour(point.score!);
    const [wantRed, wantGreen] = [parseInt(expected.slice(2, 4), 16), parseInt(expected.slice(4, 6), 16)];
    assert.ok(Math.abs(red! - wantRed) < 50 && Math.abs(green! - wantGreen) < 50, `outline at ${seconds} s: rgb ${red},${green}, score ${point.score} wants ${wantRed},${wantGreen}`);
  }
});

test("faceswap: each participant's score, verdict, confidence, track and decisive frames follow the evidence that decides", async () => {
  // The built-in model as shipped, and the same model given a say by an operator pack (weight 1).
  const models = await operatorPack(join(dir, 'operator-models'), ['face-forgery-sbi'], { weight: 1 });
  // And a pack whose thresholds clear the steady clip, so that a person is called authentic.
  const clearing = await operatorPack(join(dir, 'operator-models-clearing'), ['face-forgery-sbi'], { weight: 1, thresholds: { authentic: 0.99, manipulated: 0.995 } });
  const deciding = [];
  const verdicts = [];
  for (const [clip, modelsDir] of [[steady, null], [flicker, null], [steady, models], [flicker, models], [steady, clearing]] as const) {
    const input = inputOf(faceswap.name, [fileOf(clip, 'original', 'video/mp4')], { maxFrames: 5 });
    const result = (await faceswap.analyze({ ...input, modelsDir }, noAbort())).result as unknown as Result;
    const evidence = modelSignal(result).evidence;
    deciding.push(evidence.decides);
    verdicts.push(result.verdict);
    const participant = result.analysisDetails.participants[0] as unknown as Participant;
    const model = evidence.participants[0]!;
    const counts = evidence.decides;
    const strongest = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.max(a, b));
    // The participant's score is its strongest evidence: the identity break, or the model's probability where it decides.
    assert.equal(participant.score, strongest(participant.identityScore, counts ? model.probability : null));
    for (const point of participant.track) assert.equal(point.score, strongest(point.identityScore, counts ? (point.forgeryProbability ?? null) : null));
    // Confidence is the probability of what the verdict says; undecided, never more than the envelope's 0.3.
    const expected = { manipulated: participant.score!, authentic: round4(1 - participant.score!), inconclusive: round4(Math.min(0.3, 1 - participant.score!)) };
    assert.equal(participant.confidence, expected[participant.verdict as keyof typeof expected]);
    // A person's verdict is the video's rule applied to that person (one person here: the same verdict).
    assert.equal(participant.verdict, result.verdict);
    assert.equal(participant.fake, result.isDeepFake);
    // The frames that drove a decided verdict: the highest-scoring ones, named by the evidence that scored them; none when undecided.
    const ranked = participant.track.filter((p) => p.score !== null).sort((a, b) => b.score! - a.score! || a.timeSeconds - b.timeSeconds);
    const decisive = participant.verdict === 'inconclusive' ? [] : ranked.slice(0, 3);
    assert.deepEqual(participant.decisiveFrames.map((f) => f.timeSeconds), decisive.map((p) => p.timeSeconds));
    for (const frame of participant.decisiveFrames) {
      const point = participant.track.find((p) => p.timeSeconds === frame.timeSeconds)!;
      assert.equal(frame.by, frame.score === point.identityScore ? 'identity-consistency' : 'face-forgery-model');
    }
    const taskType = taskTypeBySlug('faceswap-detection')!;
    const withFields = withSdkFields(taskType, result as never) as { boundingBoxes: Record<string, { class: string; confidence: number }> };
    // Authenta's SDKs read the same person as the same class with the same confidence.
    assert.deepEqual(withFields.boundingBoxes['0'], { ...withFields.boundingBoxes['0']!, class: participant.fake ? 'fake' : 'real', confidence: participant.confidence });
  }
  // The operator's pack decides (its validation AUC is over the gate), so both rules were exercised.
  assert.deepEqual(deciding.slice(2), [true, true, true]);
  assert.equal(verdicts[4], 'authentic', 'the clearing pack clears the steady clip, and its person with it');
  // The swapped frame drives the flicker clip's verdict.
  const flickered = (await run(faceswap, flicker)).analysisDetails.participants[0] as unknown as Participant;
  assert.equal(flickered.decisiveFrames[0]!.timeSeconds, 2.5);
});

test('faceswap: a video without faces is inconclusive with zero confidence', async () => {
  const empty = join(dir, 'empty.mp4');
  await runFfmpeg(['-y', '-f', 'lavfi', '-i', 'color=c=gray:s=320x240:r=5:d=2', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', empty]);
  const result = await run(faceswap, empty);
  assert.equal(result.verdict, 'inconclusive');
  assert.equal(result.confidence, 0);
  assert.equal(result.analysisDetails.faces, 0);
});

test('ekyc: subject liveness, one person in view and verification against the reference', async () => {
  const result = await run(ekyc, steady, ONE_FACE);
  const ids = result.analysisDetails.signals.map((signal) => signal.id);
  assert.ok(ids.includes('subject-liveness') && ids.includes('people-in-frame') && ids.includes('identity-consistency'));
  assert.equal(result.analysisDetails.verification?.isSimilar, true);
  const liveness = result.analysisDetails.signals.find((s) => s.id === 'subject-liveness');
  const live = (liveness?.evidence as { verdict?: string } | undefined)?.verdict === 'authentic';
  expectModelRule(result, modelSignal(result).evidence, live);
  // The subject is authentic only by the video's rule: cleared by the model and assessed live.
  const subject = result.analysisDetails.participants[0] as unknown as Participant;
  assert.equal(subject.verdict === 'authentic', result.verdict === 'authentic');
  if (!live && !subject.fake) assert.equal(subject.verdict, 'inconclusive');
  const pulse = result.analysisDetails.signals.find((s) => s.id === 'remote-pulse')!;
  assert.match(JSON.stringify(pulse.evidence), /too short for a pulse/, 'a 3 s clip is too short for rPPG');
  const injection = result.analysisDetails.signals.find((s) => s.id === 'camera-injection')!;
  assert.equal(injection.score, null, 'nothing names a virtual camera');
  const flickering = await run(ekyc, flicker);
  assert.equal(flickering.isDeepFake, true);
});

test('ekyc: a selfie video written by a virtual camera is called manipulated, saying which tool', async () => {
  const injected = join(dir, 'virtual-camera.mp4');
  await runFfmpeg(['-y', '-i', steady, '-c', 'copy', '-metadata:s:v', 'handler_name=ManyCam Virtual Webcam', injected]);
  const result = await run(ekyc, injected);
  assert.equal(result.isDeepFake, true);
  assert.equal(result.verdict, 'manipulated');
  const injection = result.analysisDetails.signals.find((s) => s.id === 'camera-injection')!;
  assert.equal(injection.score, 0.9);
  assert.match(JSON.stringify(injection.evidence), /ManyCam/);
});

test('ekyc: sensor noise of consecutive frames is reported: a still filmed without noise repeats its residual, a noisy camera does not', async () => {
  // A camera's noise is new in every frame (temporal noise); a still image written into a video
  // repeats the same high-pass residual from frame to frame.
  const clip = async (name: string, noise: string) => {
    const path = join(dir, name);
    await runFfmpeg(['-y', '-loop', '1', '-i', ONE_FACE, '-t', '3', '-r', '5', '-vf', `scale=640:-2${noise}`, '-c:v', 'libx264', '-crf', '12', '-pix_fmt', 'yuv420p', path]);
    return path;
  };
  const cues = async (video: string) => {
    const result = await run(ekyc, video);
    assert.equal(result.analysisDetails.faces, 1);
    const stability = result.analysisDetails.signals.find((s) => s.id === 'noise-level-stability')!;
    const correlation = result.analysisDetails.signals.find((s) => s.id === 'residual-correlation')!;
    assert.equal(stability.weight, 0);
    assert.equal(correlation.weight, 0);
    assert.match(JSON.stringify(correlation.evidence), /replayed or injected/);
    return { level: (stability.evidence as { meanResidual: number }).meanResidual, correlation: correlation.evidence as { mean: number; pairs: number } };
  };
  const still = await cues(await clip('static-still.mp4', ''));
  const camera = await cues(await clip('temporal-noise.mp4', ',noise=alls=16:allf=t'));
  const seen = JSON.stringify({ still, camera });
  assert.ok(still.correlation.pairs >= 3 && camera.correlation.pairs >= 3, seen);
  assert.ok(still.correlation.mean > 0.95, seen);
  assert.ok(camera.correlation.mean < still.correlation.mean - 0.1, seen);
  assert.ok(camera.level > still.level, seen);
});
