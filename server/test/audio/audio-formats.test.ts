/**
 * Recordings as people send them: FLAC, OGG/Opus (voice notes) and WebM audio (browsers),
 * accepted by the audio task types, sniffed at finalize like every format, decoded by the
 * shipped ffmpeg, through the job API. A file whose bytes are another format is refused.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { client, declare, put, startServer, type TestServer } from '../helpers.js';
import { scratchDir, writeAudio } from './fixtures.js';

/** Two seconds of a voiced, speech-like signal: a 120 Hz pulse train through two formants. */
function speechLike(sampleRate = 16000, seconds = 2): Float32Array {
  const samples = new Float32Array(sampleRate * seconds);
  let seed = 5;
  for (let i = 0; i < samples.length; i++) {
    const t = i / sampleRate;
    const envelope = 0.5 + 0.5 * Math.sin(2 * Math.PI * 3 * t);
    const voiced = Math.sin(2 * Math.PI * 700 * t) * Math.sin(2 * Math.PI * 120 * t) + 0.5 * Math.sin(2 * Math.PI * 1200 * t) * Math.sin(2 * Math.PI * 120 * t);
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    samples[i] = 0.3 * envelope * voiced + 0.01 * (seed / 0x7fffffff - 0.5);
  }
  return samples;
}

describe('FLAC, OGG/Opus and WebM audio through the job API', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let dir: string;
  let cleanup: () => Promise<void>;

  before(async () => {
    ({ dir, cleanup } = await scratchDir());
    server = await startServer();
    const { tenantId } = await server.tenant(1000);
    api = client(server.url, await server.apiKey(tenantId));
  });
  after(async () => {
    await server.close();
    await cleanup();
  });

  async function analyse(taskTypeId: number, data: Buffer, contentType: string, fileName: string) {
    const created = await api.createJob(taskTypeId, [{ ...declare(data, contentType), fileName }]);
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal((await put(created.body.inputs[0].uploadUrl, data, contentType)).status, 200);
    const finalized = await api.finalize(created.body.jobId);
    return { finalized, job: finalized.status === 200 ? await api.waitFor(created.body.jobId) : null };
  }

  for (const [format, contentType, name] of [['flac', 'audio/flac', 'note.flac'], ['opus', 'audio/ogg', 'note.ogg'], ['weba', 'audio/webm', 'note.weba']] as const) {
    test(`${contentType}: ai-audio-detection and audio-splitter decode and answer`, async () => {
      const data = await readFile(await writeAudio(join(dir, name), [speechLike()], 16000, format));
      const detected = await analyse(2, data, contentType, name);
      assert.equal(detected.job!.status, 'completed', detected.job!.errorMessage);
      assert.ok(['authentic', 'manipulated', 'inconclusive'].includes(detected.job!.result.verdict));
      assert.ok(Math.abs(detected.job!.result.analysisDetails.audio.durationSeconds - 2) < 0.1, JSON.stringify(detected.job!.result.analysisDetails.audio));
      const split = await analyse(10, data, contentType, name);
      assert.equal(split.job!.status, 'completed', split.job!.errorMessage);
      assert.equal(split.job!.artifacts.filter((a: { kind: string }) => a.kind === 'track').length, 2);
    });
  }

  test('bytes of another format under an audio type are refused at finalize, saying what they are', async () => {
    const flac = await readFile(await writeAudio(join(dir, 'real.flac'), [speechLike()], 16000, 'flac'));
    const { finalized } = await analyse(2, flac, 'audio/ogg', 'claimed.ogg');
    assert.equal(finalized.status, 400);
    assert.equal(finalized.body.code, 'UNSUPPORTED_MEDIA_TYPE');
    assert.match(finalized.body.message, /flac/);
  });
});
