import { decodePixels, loadImage } from '../src/detectors/image/image-input.js';
import { lumaAndBlocking } from '../src/detectors/image/forgery.js';
import { missingCameraNoise as fresh } from '../src/detectors/image/forgery/missing-noise.js';
import { missingCameraNoise as old } from './mn-old.ts';
const lumas = await Promise.all(process.argv.slice(2).map(async (f) => { const rgb = await decodePixels(await loadImage(f), { channels: 3 }); return { luma: lumaAndBlocking(rgb.data, rgb.width, rgb.height).luma, w: rgb.width, h: rgb.height }; }));
const total = { old: 0, fresh: 0 }; const rule = { a: 1, b: 0, minPixels: 1e6 };
for (let round = 0; round < 4; round++) for (const [name, fn] of [['old', old], ['fresh', fresh]] as const) {
  const c = process.cpuUsage(); for (const l of lumas) fn(l.luma, l.w, l.h, rule); const u = process.cpuUsage(c);
  if (round > 0) total[name] += (u.user + u.system) / 1000;
}
console.log(`missing-noise CPU ms per image: old ${(total.old / 3 / lumas.length).toFixed(0)}, new ${(total.fresh / 3 / lumas.length).toFixed(0)}`);
