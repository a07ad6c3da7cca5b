/**
 * `node --import tsx bench/face-forgery.ts [--crops 200]` (`MODELS_DIR=<dir>`: an operator pack of the same name instead,
 * to measure a previous version beside the shipped one in the same session)
 *
 * Face crops per second through the self-blended-images face-forgery model on one core
 * (onnxruntime sessions use one thread): crop + resize + model, one crop per run and batched
 * as the video detectors run it (one batch per participant), on generated crops of a 640x480
 * frame. Next to it, in the same run, the per-frame cost of the face analysis the video
 * detectors already pay without the model (Human: detection, mesh, embedding), so the model's
 * share of a faceswap / eKYC job can be read off.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { loadConfig } from '../server/src/config.js';
import { cropShareOf, faceCrop, loadFaceForgeryModel, scoreFaceCrop, scoreFaceCrops } from '../server/src/detectors/face/face-forgery.js';
import { analyseFaces } from '../server/src/detectors/face/face-analysis.js';
import { decodeImage } from '../server/src/detectors/face/image-input.js';
import { numberOption } from './measure.js';

const crops = numberOption('crops', 200);
const { model, problems } = await loadFaceForgeryModel(loadConfig().modelsDir);
if (!model) throw new Error(`face-forgery model did not load: ${JSON.stringify(problems)}`);
const width = 640, height = 480;
const data = new Uint8Array(width * height * 3);
for (let i = 0; i < data.length; i++) data[i] = (i * 2654435761) >>> 24;
const image = { data, width, height, channels: 3 };
const share = cropShareOf(model); // the crop the shipped model was trained on
const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;

for (let i = 0; i < 5; i++) await scoreFaceCrop(model, await faceCrop(image, [200, 100, 260, 260], share));
let start = process.hrtime.bigint();
for (let i = 0; i < crops; i++) await scoreFaceCrop(model, await faceCrop(image, [200 + (i % 20), 100, 260, 260], share));
const single = seconds(start);

const BATCH = 16;
start = process.hrtime.bigint();
for (let done = 0; done < crops; done += BATCH) {
  const batch = [];
  for (let i = done; i < Math.min(crops, done + BATCH); i++) batch.push(await faceCrop(image, [200 + (i % 20), 100, 260, 260], share));
  await scoreFaceCrops(model, batch);
}
const batched = seconds(start);

// The face analysis each sampled frame already costs (the detectors without the model).
const require = createRequire(import.meta.url);
const photo = join(dirname(require.resolve('@vladmandic/human')), '..', 'assets', 'screenshot-faceid.jpg');
const decoded = await decodeImage(photo);
await analyseFaces(decoded, { emotion: false, spoof: false });
const FRAMES = 10;
start = process.hrtime.bigint();
for (let i = 0; i < FRAMES; i++) await analyseFaces(decoded, { emotion: false, spoof: false });
const analysis = seconds(start) / FRAMES;

console.log(
  JSON.stringify({
    model: `${model.descriptor.name} ${model.descriptor.version}`,
    crops,
    cropsPerSecond: +(crops / single).toFixed(1),
    cropsPerSecondBatched: +(crops / batched).toFixed(1),
    msPerCrop: +((1000 * single) / crops).toFixed(2),
    faceAnalysisMsPerFrameWithoutModel: +(1000 * analysis).toFixed(1),
    modelShareOfOneFaceFrame: +(single / crops / (single / crops + analysis)).toFixed(3),
  }),
);
