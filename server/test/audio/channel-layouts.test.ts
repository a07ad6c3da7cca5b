import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { probeAudio } from '../../src/detectors/audio/pcm.js';
import { channelCount, runFfmpeg } from '../../src/detectors/media/ffmpeg.js';
import { scratchDir } from './fixtures.js';

let dir: string;
let cleanup: () => Promise<void>;
before(async () => ({ dir, cleanup } = await scratchDir()));
after(() => cleanup());

test("ffmpeg's channel layouts read as channel counts", () => {
  const expected: Record<string, number> = {
    mono: 1, stereo: 2, '2.1': 3, '3.0': 3, quad: 4, 'quad(side)': 4, '5.0': 5, '5.1': 6, '5.1(side)': 6, '6.1': 7, '7.1': 8,
    '7.1(wide)': 8, hexagonal: 6, octagonal: 8, '5.1.4': 10, '22.2': 24, '6 channels': 6, '3 channels (FL+FR+LFE)': 3, downmix: 2,
  };
  for (const [layout, channels] of Object.entries(expected)) assert.equal(channelCount(layout), channels, layout);
  assert.equal(channelCount('something new'), 2, 'an unreadable layout is decoded as a stereo mix');
});

test('files with surround layouts probe with the channels they decode to', async () => {
  const cases: Array<[string, string[], number]> = [
    ['surround.wav', ['-ac', '6', '-c:a', 'pcm_s16le'], 6],
    ['surround.flac', ['-ac', '8', '-c:a', 'flac'], 8],
    ['quad.wav', ['-af', 'aformat=channel_layouts=quad', '-c:a', 'pcm_s16le'], 4],
    ['three.m4a', ['-af', 'aformat=channel_layouts=2.1', '-c:a', 'aac'], 3],
    ['surround.ogg', ['-ac', '6', '-c:a', 'libopus', '-mapping_family', '1'], 6],
  ];
  for (const [name, args, channels] of cases) {
    const path = join(dir, name);
    await runFfmpeg(['-f', 'lavfi', '-i', 'sine=frequency=440:duration=0.5', ...args, '-y', path]);
    assert.equal((await probeAudio(path)).audio.channels, channels, name);
  }
});
