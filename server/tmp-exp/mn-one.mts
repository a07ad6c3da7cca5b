import { readFile } from 'node:fs/promises';
import { decodePixels, loadImage } from '../src/detectors/image/image-input.js';
import { lumaAndBlocking } from '../src/detectors/image/forgery.js';
import { missingCameraNoise } from '../src/detectors/image/forgery/missing-noise.js';
for (const f of process.argv.slice(2)) {
  const image = await loadImage(f); const rgb = await decodePixels(image, { channels: 3 });
  const { luma } = lumaAndBlocking(rgb.data, rgb.width, rgb.height);
  const m = missingCameraNoise(luma, rgb.width, rgb.height, { a: 1, b: 0, minPixels: 1e6 });
  console.log(f.split('/').pop(), m.peak.toFixed(2), m.skipped ?? '');
}
