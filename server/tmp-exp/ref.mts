import { readdir } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import sharp from 'sharp';
import { analyzeImageForgery } from '../src/detectors/image/forgery.js';
sharp.concurrency(1);
const files = process.argv.slice(2);
for (const file of files) {
  const t = performance.now(); const c = process.cpuUsage();
  const r: any = await analyzeImageForgery(file, new AbortController().signal, { learnedModels: { modelsDir: null }, cameraNoise: true });
  const u = process.cpuUsage(c);
  const digest = createHash('sha256').update(JSON.stringify(r, (k, v) => (v instanceof Float32Array || v instanceof Uint8Array ? Array.from(v) : Buffer.isBuffer(v) ? v.toString('base64') : v))).digest('hex').slice(0, 16);
  console.log(JSON.stringify({ file: file.split('/').pop(), digest, score: r.score, cpuMs: Math.round((u.user + u.system) / 1000), signals: r.signals.map((s: any) => [s.id, s.score]) }));
}
