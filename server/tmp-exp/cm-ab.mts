import { decodePixels, loadImage } from '../src/detectors/image/image-input.js';
import { copyMoveDetection as fresh } from '../src/detectors/image/forgery/copy-move.js';
import { copyMoveDetection as old } from './copy-move-old.ts';
const images = await Promise.all(process.argv.slice(2).map(async (f) => decodePixels(await loadImage(f), { channels: 1, maxPixels: 240_000 })));
const signal = new AbortController().signal;
const total = { old: 0, fresh: 0 };
for (let round = 0; round < 3; round++) {
  for (const [name, fn] of [['old', old], ['fresh', fresh]] as const) {
    const c = process.cpuUsage();
    for (const im of images) fn(new Float32Array(im.data), im.width, im.height, signal, {});
    const u = process.cpuUsage(c); if (round > 0) total[name] += (u.user + u.system) / 1000;
  }
}
console.log(`copy-move CPU ms per image (2 rounds, ${images.length} images): old ${(total.old / 2 / images.length).toFixed(0)}, new ${(total.fresh / 2 / images.length).toFixed(0)}`);
