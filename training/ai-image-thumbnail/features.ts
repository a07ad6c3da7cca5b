/**
 * Dumps, for every file of the CIFAKE development folder, the pixels exactly as the server
 * decodes them (image-input.ts: 8-bit RGB, stored orientation) and the six fitted statistical
 * features of ai-image-statistics.ts, so that train.py trains on the server's own decode and
 * refits the statistics' logistic inside each cross-validation fold.
 *
 *   cd /work/main && node --import tsx training/ai-image-thumbnail/features.ts \
 *     [--data /work/shared/data/ai-image/cifake] [--out /work/data/ai-image-thumbnail]
 *
 * Writes <out>/features.json ({file, label, width, height, features}) and <out>/pixels.u8
 * (N × 32 × 32 × 3 bytes, same order; only 32×32 images are written there).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { computeStatisticalSignals } from '../../server/src/detectors/image/ai-image-statistics.js';
import { readMetadata } from '../../server/src/detectors/image/generator-metadata.js';
import { decodePixels, loadImage } from '../../server/src/detectors/image/image-input.js';
import { readLabels } from '../../server/src/eval/main.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(name);
  return resolve(i > 0 ? process.argv[i + 1]! : fallback);
};
const data = arg('--data', '/work/shared/data/ai-image/cifake');
const out = arg('--out', '/work/data/ai-image-thumbnail');

const rows = [];
const pixels: Buffer[] = [];
for (const { file, label } of await readLabels(data)) {
  const image = await loadImage(join(data, file));
  const raster = await decodePixels(image, { channels: image.hasAlpha ? 4 : 3 });
  if (raster.width !== 32 || raster.height !== 32 || raster.channels !== 3) throw new Error(`${file}: ${raster.width}x${raster.height}x${raster.channels}, expected 32x32x3`);
  const metadata = await readMetadata(image.bytes);
  const { features } = await computeStatisticalSignals(image, raster, metadata, new AbortController().signal);
  rows.push({ file, label, width: raster.width, height: raster.height, features });
  pixels.push(Buffer.from(raster.data));
}
await mkdir(out, { recursive: true });
await writeFile(join(out, 'features.json'), JSON.stringify(rows));
await writeFile(join(out, 'pixels.u8'), Buffer.concat(pixels));
console.log(`${rows.length} files from ${data} -> ${out}`);
