import sharp from 'sharp';
import { decodePixels, loadImage } from '../src/detectors/image/image-input.js';
import { denseField, copiedRegions } from './copy-move-x.ts';
const [file, maskFile, pxs, offx, offy] = process.argv.slice(2);
const image = await loadImage(file!);
for (const px of pxs!.split(',').map(Number)) {
  const small = await decodePixels(image, { channels: 1, maxPixels: px });
  const { width, height } = small;
  const mask = await sharp(maskFile!).resize(width, height, { fit: 'fill' }).extractChannel(0).raw().toBuffer();
  const f = denseField(new Float32Array(small.data), width, height, new AbortController().signal);
  const sx = Number(offx) * width / image.width, sy = Number(offy) * height / image.height;
  let inMask = 0, tex = 0, right = 0, rightFiltered = 0, lowFit = 0;
  for (let p = 0; p < width * height; p++) {
    if (mask[p]! < 128) continue; inMask++;
    if (!f.textured[p]) continue; tex++;
    if (Math.abs(f.ox[p]! - sx) <= 2 && Math.abs(f.oy[p]! - sy) <= 2) right++;
    if (Math.abs(f.fieldX[p]! - sx) <= 2 && Math.abs(f.fieldY[p]! - sy) <= 2) rightFiltered++;
    if (f.fitError[p]! < 15) lowFit++;
  }
  const r = copiedRegions(f);
  console.log({ px, width, height, expected: [sx.toFixed(1), sy.toFixed(1)], inMask, tex, right, rightFiltered, lowFit, found: r.shiftVectors, rej: [r.rejectedAsPeriodic, r.rejectedAsThin] });
}
