/**
 * ai-video-detection (3) through the job API on clips made here with the shipped ffmpeg:
 * provenance in the container decides (a ComfyUI graph in `comment`, a generator named in
 * `title`, an XMP packet declaring trainedAlgorithmicMedia); a plain clip gets its timeline of
 * segments and is `inconclusive`, never called authentic on pixels alone; a C2PA manifest signed
 * here (c2pa-signing.ts) decides, and reports a hash broken by a later edit; broken files fail
 * their own job with a clear message.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runFfmpeg } from '../../src/detectors/media/ffmpeg.js';
import type { VerdictResult } from '../../src/detectors/result.js';
import type { Signal } from '../../src/detectors/types.js';
import { generatorsInTags, xmpSourceTypes } from '../../src/detectors/video/video-provenance.js';
import { parsePpms, type NoiseCues } from '../../src/detectors/video/frame-pairs.js';
import { client, put, startServer, type TestServer } from '../helpers.js';
import { c2paSigningSkipReason, makeTestSigner, signWithC2pa } from '../c2pa-signing.js';

/** A signal of the result, with the evidence fields these tests read (iptc-source-type, c2pa). */
type VideoSignal = Signal & { evidence: { digitalSourceTypes?: string[]; validationState?: string; failures?: string[]; signatureIssuer?: string; note?: string } };
/** One segment of the timeline (`analysisDetails.segments`): its time span and its frame's noise cues. */
type Segment = NoiseCues & { start: number; end: number };

const COMFY_GRAPH = JSON.stringify({ '3': { class_type: 'KSampler', inputs: { seed: 1, steps: 20 } }, '12': { class_type: 'VHS_VideoCombine', inputs: { frame_rate: 8 } } });

/** A moving test pattern with noise, 2 s at 10 fps, optionally tagged. */
async function clip(dir: string, name: string, options: { metadata?: Record<string, string>; codec?: 'h264' | 'vp9' | 'hevc10'; seconds?: number } = {}): Promise<string> {
  const path = join(dir, name);
  const codecs = { h264: ['-c:v', 'libx264', '-pix_fmt', 'yuv420p'], vp9: ['-c:v', 'libvpx-vp9', '-b:v', '300k'], hevc10: ['-c:v', 'libx265', '-pix_fmt', 'yuv420p10le', '-tag:v', 'hvc1', '-x265-params', 'log-level=error'] };
  const codec = codecs[options.codec ?? 'h264'];
  const tags = Object.entries(options.metadata ?? {}).flatMap(([key, value]) => ['-metadata', `${key}=${value}`]);
  await runFfmpeg(['-y', '-f', 'lavfi', '-i', `testsrc2=s=320x240:r=10:d=${options.seconds ?? 2}`, '-vf', 'noise=alls=12:allf=t', ...codec, ...tags, path]);
  return path;
}

/** An MP4 with a top-level XMP `uuid` box (XMP Specification Part 3 §1.2.7) appended. */
async function withXmp(path: string, sourceType: string): Promise<Buffer> {
  const packet = Buffer.from(
    `<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">` +
      `<rdf:Description xmlns:Iptc4xmpExt="http://iptc.org/std/Iptc4xmpExt/2008-02-29/" Iptc4xmpExt:DigitalSourceType="http://cv.iptc.org/newscodes/digitalsourcetype/${sourceType}"/>` +
      `</rdf:RDF></x:xmpmeta><?xpacket end="w"?>`,
  );
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + 16 + packet.length);
  header.write('uuid', 4, 'latin1');
  const xmpUuid = Buffer.from('BE7ACFCB97A942E89C71999491E3AFAC', 'hex');
  return Buffer.concat([await readFile(path), header, xmpUuid, packet]);
}

describe('ai-video-detection through the job API', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let dir: string;

  before(async () => {
    server = await startServer();
    const { tenantId } = await server.tenant(500);
    api = client(server.url, await server.apiKey(tenantId));
    dir = await mkdtemp(join(tmpdir(), 'mediaproof-ai-video-'));
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function analyse(bytes: Uint8Array, contentType = 'video/mp4', parameters: Record<string, unknown> = { frames: 4 }) {
    const created = await api.createJob(3, [{ slotName: 'original', fileName: 'clip', contentType, sizeBytes: bytes.byteLength }], { parameters });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal((await put(created.body.inputs[0].uploadUrl, bytes, contentType)).status, 200);
    assert.equal((await api.finalize(created.body.jobId)).status, 200);
    return api.waitFor(created.body.jobId, undefined, 120_000);
  }
  const signal = (result: VerdictResult, id: string) => result.analysisDetails.signals.find((s) => s.id === id) as VideoSignal;

  test('a ComfyUI workflow graph in the container decides AI-generated, with the timeline of segments', async () => {
    const job = await analyse(await readFile(await clip(dir, 'comfy.mp4', { metadata: { comment: COMFY_GRAPH } })));
    assert.equal(job.status, 'completed', job.errorMessage);
    assert.equal(job.result.verdict, 'manipulated');
    assert.equal(job.result.isAiGenerated, true);
    assert.equal(job.result.analysisDetails.generator, 'ComfyUI (workflow graph)');
    assert.equal(signal(job.result, 'generator-metadata').score, 0.98);
    const segments = job.result.analysisDetails.segments;
    assert.equal(segments.length, 4);
    assert.ok(segments.every((s: Segment, i: number) => s.start < s.end && (i === 0 || s.start >= segments[i - 1].start)));
    assert.ok(segments.every((s: Segment) => s.noiseLevel > 0 && s.residualCorrelation !== null));
  });

  test('a generator named in the title decides too', async () => {
    const job = await analyse(await readFile(await clip(dir, 'sora.mp4', { metadata: { title: 'Made with OpenAI Sora' } })));
    assert.equal(job.result.verdict, 'manipulated');
    assert.equal(job.result.analysisDetails.generator, 'OpenAI Sora');
  });

  test('an XMP packet declaring trainedAlgorithmicMedia decides; one declaring a capture does not', async () => {
    const base = await clip(dir, 'xmp.mp4');
    const ai = await analyse(await withXmp(base, 'trainedAlgorithmicMedia'));
    assert.equal(ai.status, 'completed', ai.errorMessage);
    assert.equal(ai.result.verdict, 'manipulated');
    assert.deepEqual(signal(ai.result, 'iptc-source-type').evidence.digitalSourceTypes, ['http://cv.iptc.org/newscodes/digitalsourcetype/trainedAlgorithmicMedia']);
    const capture = await analyse(await withXmp(base, 'digitalCapture'));
    assert.equal(capture.result.verdict, 'inconclusive');
  });

  test('a C2PA-signed MP4 whose manifest declares trainedAlgorithmicMedia decides on provenance; a signed capture does not, and an altered file says its hash broke', async (t) => {
    const skip = await c2paSigningSkipReason();
    if (skip) return t.skip(skip);
    const signer = await makeTestSigner();
    const base = await readFile(await clip(dir, 'c2pa.mp4'));
    const generated = await signWithC2pa(base, 'video/mp4', { sourceType: 'trainedAlgorithmicMedia', softwareAgent: 'Sora' }, signer);
    const ai = await analyse(generated);
    assert.equal(ai.status, 'completed', ai.errorMessage);
    assert.equal(ai.result.verdict, 'manipulated');
    assert.equal(ai.result.isAiGenerated, true);
    assert.equal(ai.result.confidence, 0.95);
    assert.equal(ai.result.analysisDetails.generator, 'Sora');
    assert.match(ai.result.analysisDetails.basis, /signed C2PA manifest declares AI-generated content/);
    const c2pa = signal(ai.result, 'c2pa');
    assert.equal(c2pa.evidence.validationState, 'Valid');
    assert.deepEqual(c2pa.evidence.failures, []);
    assert.equal(c2pa.evidence.signatureIssuer, 'mediaproof tests');

    // A signed capture claim is not AI evidence; under an untrusted signer (no C2PA_TRUST_ANCHORS)
    // it is reported with weight 0 and decides nothing, as for images.
    const captured = await analyse(await signWithC2pa(base, 'video/mp4', { sourceType: 'digitalCapture', softwareAgent: 'Camera app' }, signer));
    assert.equal(captured.status, 'completed', captured.errorMessage);
    assert.equal(captured.result.isAiGenerated, false);
    assert.equal(signal(captured.result, 'c2pa').score, 0.1);
    assert.equal(signal(captured.result, 'c2pa').weight, 0);

    // One byte of the coded frames changed after signing: the manifest's hash no longer matches.
    const altered = Buffer.from(generated);
    const frameByte = altered.indexOf('mdat', 0, 'latin1') + 2000;
    altered[frameByte] = altered[frameByte]! ^ 0x01;
    const broken = await analyse(altered);
    assert.equal(broken.status, 'completed', broken.errorMessage);
    assert.equal(broken.result.verdict, 'manipulated');
    assert.equal(broken.result.confidence, 0.75);
    assert.deepEqual(signal(broken.result, 'c2pa').evidence.failures, ['assertion.bmffHash.mismatch']);
    assert.match(broken.result.analysisDetails.basis, /changed after signing/);
  });

  test('a plain WebM clip is inconclusive, says which evidence was absent, and is never called authentic on pixels alone', async () => {
    const job = await analyse(await readFile(await clip(dir, 'plain.webm', { codec: 'vp9' })), 'video/webm', { frames: 3 });
    assert.equal(job.status, 'completed', job.errorMessage);
    assert.equal(job.result.verdict, 'inconclusive');
    assert.equal(job.result.isAiGenerated, false);
    assert.match(signal(job.result, 'c2pa').evidence.note!, /no C2PA manifest/);
    assert.match(job.result.analysisDetails.basis, /no provenance/);
    assert.equal(job.result.analysisDetails.segments.length, 3);
    assert.equal(job.result.analysisDetails.video.codec, 'vp9');
  });

  test('a 10-bit HEVC MOV, as phones record by default, gets its timeline of segments with noise cues', async () => {
    const job = await analyse(await readFile(await clip(dir, 'phone.mov', { codec: 'hevc10' })), 'video/quicktime', { frames: 3 });
    assert.equal(job.status, 'completed', job.errorMessage);
    assert.equal(job.result.verdict, 'inconclusive');
    assert.equal(job.result.analysisDetails.video.codec, 'hevc');
    const segments = job.result.analysisDetails.segments;
    assert.equal(segments.length, 3);
    assert.ok(segments.every((s: Segment) => s.noiseLevel > 0 && s.residualCorrelation !== null), JSON.stringify(segments));
  });

  test('bad input: audio only, a truncated container, a one-frame video, a bad parameter', async () => {
    const audioOnly = join(dir, 'audio.mp4');
    await runFfmpeg(['-y', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', '-c:a', 'aac', audioOnly]);
    const noVideo = await analyse(await readFile(audioOnly));
    assert.equal(noVideo.status, 'failed');
    assert.match(noVideo.errorMessage, /no video stream/);

    const whole = await readFile(await clip(dir, 'whole.mp4'));
    const truncated = await analyse(whole.subarray(0, Math.floor(whole.length / 3)));
    assert.equal(truncated.status, 'failed');
    assert.ok(truncated.errorMessage.length > 10 && !truncated.errorMessage.includes(dir), truncated.errorMessage);

    const single = join(dir, 'single.mp4');
    await runFfmpeg(['-y', '-f', 'lavfi', '-i', 'testsrc2=s=160x120:r=1:d=1', '-frames:v', '1', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', single]);
    const one = await analyse(await readFile(single), 'video/mp4', { frames: 2 });
    assert.equal(one.status, 'completed', one.errorMessage);
    assert.equal(one.result.verdict, 'inconclusive');

    const created = await api.createJob(3, [{ slotName: 'original', fileName: 'c.mp4', contentType: 'video/mp4', sizeBytes: whole.byteLength }], { parameters: { frames: 500 } });
    await put(created.body.inputs[0].uploadUrl, whole, 'video/mp4');
    await api.finalize(created.body.jobId);
    const refused = await api.waitFor(created.body.jobId);
    assert.equal(refused.status, 'failed');
    assert.match(refused.errorMessage, /frames must be an integer from 1 to 48/);
  });
});

test('generator tags: a ComfyUI graph and named services count; camera tags and plain encoders do not', () => {
  const found = generatorsInTags([
    ['comment', COMFY_GRAPH],
    ['encoder', 'Lavf60.3.100'],
    ['com.apple.quicktime.model', 'iPhone 15'],
    ['description', 'Generated by Runway Gen-3 Alpha'],
  ]);
  assert.deepEqual(found.map((f) => [f.generator, f.field]), [['ComfyUI (workflow graph)', 'tag:comment'], ['Runway', 'tag:description']]);
});

test('XMP source types are found in a uuid box at the end of the file', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mediaproof-xmp-'));
  try {
    const path = join(dir, 'a.mp4');
    await writeFile(path, await withXmp(await clip(dir, 'b.mp4'), 'compositeWithTrainedAlgorithmicMedia'));
    assert.deepEqual(await xmpSourceTypes(path), ['http://cv.iptc.org/newscodes/digitalsourcetype/compositeWithTrainedAlgorithmicMedia']);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('PPM frames are split by their own headers', () => {
  const frame = (w: number, h: number, value: number) => Buffer.concat([Buffer.from(`P6\n${w} ${h}\n255\n`), Buffer.alloc(w * h * 3, value)]);
  const rasters = parsePpms(Buffer.concat([frame(3, 2, 7), frame(2, 2, 9)]));
  assert.deepEqual(rasters.map((r) => [r.width, r.height, r.data[0]]), [[3, 2, 7], [2, 2, 9]]);
  assert.equal(parsePpms(frame(4, 4, 1).subarray(0, 20)).length, 0, 'a cut frame is dropped');
});
