/**
 * Human's face box on the LFW photos, found as lfw-landmarks.ts finds their meshes (lfw-face.ts's centredFace),
 * for train.py's LFW_BOX / LFW_DY: the crop the service takes of a face is a share of this box, so the
 * training crops of the photos must be cut at the box the detector really finds (stop 40 found 420 px,
 * 20 px low, on the greyscale 350 px copy; v12 measures the colour deep-funneled copy the same way).
 * Run from the repository root: node --import tsx training/face-forgery/measure-lfw-boxes.ts <folder> [every]
 * Prints the side and the centre's offset from the photo's centre (median, 10th and 90th percentiles).
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { LFW_SIDE, centredFace } from './lfw-face.js';

const [folder, every = '150'] = process.argv.slice(2);
if (!folder) throw new Error('usage: measure-lfw-boxes.ts <folder> [every]');
const files = (await readdir(folder)).filter((name) => /\.(jpg|png)$/.test(name)).sort().filter((_, i) => i % Number(every) === 0);
const sides: number[] = [], dxs: number[] = [], dys: number[] = [];
for (const name of files) {
  const face = await centredFace(sharp(join(folder, name)));
  if (!face) continue;
  const [x, y, w, h] = face.box;
  sides.push(Math.max(w, h)); dxs.push(x + w / 2 - LFW_SIDE / 2); dys.push(y + h / 2 - LFW_SIDE / 2);
}
const q = (v: number[], p: number) => [...v].sort((a, b) => a - b)[Math.floor(p * (v.length - 1))]!.toFixed(1);
for (const [label, v] of [['side', sides], ['centre dx', dxs], ['centre dy', dys]] as const) console.log(label, 'median', q(v, 0.5), '10-90 %', q(v, 0.1), q(v, 0.9));
console.log('photos', files.length, 'with a face', sides.length);
