import { writeFile, mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import sharp from 'sharp';
import { analyzeImageForgery } from '../src/detectors/image/forgery.js';
const dir = await mkdtemp(join(tmpdir(), 'edge-'));
const cases: Array<[string, number, number, (s: sharp.Sharp) => sharp.Sharp, object]> = [
  ['grey', 4000, 3000, (s) => s, { background: '#808080' }],
  ['white', 4000, 3000, (s) => s, { background: '#ffffff' }],
  ['black', 4000, 3000, (s) => s, { background: '#000000' }],
  ['noise4096', 4096, 4096, (s) => s, { background: '#000', noise: { type: 'gaussian', mean: 128, sigma: 30 } }],
  ['strip', 20000, 60, (s) => s, { background: '#000', noise: { type: 'gaussian', mean: 128, sigma: 30 } }],
];
for (const [name, width, height, f, extra] of cases) {
  const { noise, background } = extra as any;
  const path = join(dir, `${name}.jpg`);
  await writeFile(path, await f(sharp({ create: { width, height, channels: 3, background, ...(noise ? { noise } : {}) } })).jpeg({ quality: 90 }).toBuffer());
  try {
    const a: any = await analyzeImageForgery(path, new AbortController().signal, { learnedModels: { modelsDir: null }, cameraNoise: true });
    const mn = a.signals.find((s: any) => s.id === 'missing-noise');
    console.log(name, 'score', a.score.toFixed(3), 'mn', mn.score, mn.weight, (mn.evidence.skipped ?? mn.evidence.note ?? '').slice(0, 90));
  } catch (e) { console.log(name, 'ERROR', (e as Error).message); }
}
