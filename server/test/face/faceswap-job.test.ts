/**
 * faceswap-detection through the job API on two clips made here (issue 17, "Prove it"): a face
 * video from a shipped photo with camera-like motion, and the same video with the face region
 * blended onto a colour-shifted, blurred copy of itself (a self-blended image, Shiohara &
 * Yamasaki, CVPR 2022: the boundary a face swap leaves). One participant per clip, its heatmap
 * video downloadable and playable H.264, the face-forgery model's signal present, and the
 * blended clip scored above the clean one by the model.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { analyseFaces } from '../../src/detectors/face/face-analysis.js';
import type { ParticipantForgery } from '../../src/detectors/face/face-forgery.js';
import { decodeImage } from '../../src/detectors/face/image-input.js';
import { runFfmpeg } from '../../src/detectors/media/ffmpeg.js';
import type { VerdictResult } from '../../src/detectors/result.js';
import type { Signal } from '../../src/detectors/types.js';
import type { ArtifactView } from '../../src/services/job-views.js';
import { client, startServer, submit, type TestServer } from '../helpers.js';
import { ONE_FACE, scratchDir, stillClip } from './helpers.js';

/** What the test reads of a completed faceswap-detection job (GET /jobs/:id). */
interface FaceswapJob {
  result: VerdictResult & { analysisDetails: { participants: Array<{ heatmap?: string }> } };
  artifacts: ArtifactView[];
}
/** The face-forgery model's signal, its participants as face-forgery.ts reports them (no per-frame probabilities). */
type ForgerySignal = Signal & { evidence: { participants: Array<Omit<ParticipantForgery, 'frameProbabilities'>> } };

let server: TestServer;
let api: ReturnType<typeof client>;
let dir: string;

before(async () => {
  server = await startServer();
  const { tenantId } = await server.tenant(500);
  api = client(server.url, await server.apiKey(tenantId));
  dir = await scratchDir();
});
after(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

/** The photo with its face blended onto a colour-shifted, blurred copy of itself inside a soft ellipse. */
async function blendedFacePhoto(): Promise<string> {
  const image = await decodeImage(ONE_FACE);
  const [face] = await analyseFaces(image);
  assert.ok(face, 'the sample photo has a face');
  const { data, info } = await sharp(ONE_FACE).rotate().removeAlpha().raw().toBuffer({ resolveWithObject: true });
  // Analysis pixels to the photo's own pixels (the analysis view may be scaled down).
  const scale = info.width / image.width;
  const [bx, by, bw, bh] = face.boxAnalysisPixels.map((v) => v * scale) as [number, number, number, number];
  // Blur and light in proportion to the face, so the boundary survives the clip's scaling and H.264.
  const blurred = await sharp(data, { raw: { width: info.width, height: info.height, channels: 3 } }).blur(Math.max(1, 0.02 * bw)).raw().toBuffer();
  const out = Buffer.from(data);
  for (let y = 0; y < info.height; y++) {
    for (let x = 0; x < info.width; x++) {
      const dx = (x - (bx + bw / 2)) / (0.45 * bw), dy = (y - (by + bh * 0.55)) / (0.55 * bh);
      const mask = Math.min(1, Math.max(0, (1 - Math.hypot(dx, dy)) * 4));
      if (mask === 0) continue;
      for (let c = 0; c < 3; c++) {
        const i = (y * info.width + x) * 3 + c;
        const source = Math.min(255, blurred[i]! * [1.18, 1.08, 1.02][c]! + 6);
        out[i] = Math.round(mask * source + (1 - mask) * data[i]!);
      }
    }
  }
  const path = join(dir, 'blended.jpg');
  await sharp(out, { raw: { width: info.width, height: info.height, channels: 3 } }).jpeg({ quality: 95 }).toFile(path);
  return path;
}

async function faceswapJob(path: string) {
  const job = await api.waitFor(await submit(api, 4, await readFile(path), 'video/mp4'), undefined, 240_000);
  assert.equal(job.status, 'completed', job.errorMessage);
  return job;
}

test('a clean and a face-blended clip through the job API: one participant each, a playable heatmap video, the model scoring the blend higher', async () => {
  const clean = await faceswapJob(await stillClip(dir, ONE_FACE, 'clean.mp4', 3));
  const blended = await faceswapJob(await stillClip(dir, await blendedFacePhoto(), 'blended.mp4', 3));

  const modelProbability = async (job: FaceswapJob, label: string) => {
    const participants = job.result.analysisDetails.participants;
    assert.equal(participants.length, 1, `${label}: one participant per face`);
    const signal = job.result.analysisDetails.signals.find((s) => s.id === 'model:face-forgery-sbi') as ForgerySignal | undefined;
    assert.ok(signal, `${label}: the face-forgery model signal is present`);
    const scored = signal.evidence.participants[0]!;
    assert.ok(scored.framesScored >= 3, `${label}: ${JSON.stringify(scored)}`);

    // The participant's heatmap video is an artifact of the job: download it and decode it whole.
    const artifact = job.artifacts.find((a) => a.id === participants[0]!.heatmap);
    assert.ok(artifact, `${label}: the heatmap video is listed among the job's artifacts`);
    assert.equal(artifact.kind, 'heatmap');
    assert.equal(artifact.contentType, 'video/mp4');
    const response = await fetch(artifact.downloadUrl);
    assert.equal(response.status, 200);
    const video = join(dir, `${label}-heatmap.mp4`);
    await writeFile(video, Buffer.from(await response.arrayBuffer()));
    const { stderr } = await runFfmpeg(['-i', video, '-f', 'null', '-']);
    assert.match(stderr, /Video: h264/);
    assert.ok(Number(/frame=\s*(\d+)/.exec(stderr)![1]) >= 20, `${label}: about 10 fps over 3 s`);
    return scored.probability as number;
  };
  const cleanProbability = await modelProbability(clean, 'clean');
  const blendedProbability = await modelProbability(blended, 'blended');
  assert.ok(blendedProbability > cleanProbability, `blended ${blendedProbability} vs clean ${cleanProbability}`);
});
