/**
 * v9: face meshes of the LFW photos, for SBI's landmark-hull blending masks (Shiohara &
 * Yamasaki, CVPR 2022, §3.2: the mask is the convex hull of the face's landmarks, then deformed).
 *
 * For every 350x350 JPEG (v12: or PNG) of <folder> (train.py's LFW crops) this finds the named person's
 * face with the service's Human detector, framed and chosen as lfw-face.ts's centredFace says. It writes
 * <out.json>: { "<file name>": [[x, y] x 468] in the photo's pixels, or null when no face is found }.
 * Run from the repository root (a shard k of n for two processes):
 *   node --import tsx training/face-forgery/lfw-landmarks.ts <folder> <out.json> [k/n]
 * Data preparation only: it never writes into the repository.
 */
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { LFW_SIDE, centredFace } from './lfw-face.js';

const [folder, outPath, shard = '0/1'] = process.argv.slice(2);
if (!folder || !outPath) throw new Error('usage: lfw-landmarks.ts <folder> <out.json> [k/n]');
const [k, n] = shard.split('/').map(Number) as [number, number];
const files = (await readdir(folder)).filter((name) => /\.(jpg|png)$/.test(name)).sort().filter((_, i) => i % n === k); // v12: the colour copy is PNG
const meshes: Record<string, number[][] | null> = {};
const started = performance.now();
for (const [i, name] of files.entries()) {
  const photo = sharp(join(folder, name));
  const { width, height } = await photo.metadata();
  if (width !== LFW_SIDE || height !== LFW_SIDE) continue; // train.py skips the non-LFW crops too
  const face = await centredFace(photo);
  meshes[name] = face ? face.mesh.map(([x, y]) => [Math.round(x * 10) / 10, Math.round(y * 10) / 10]) : null;
  if (i % 500 === 0) console.log(i, 'of', files.length, Math.round((performance.now() - started) / 1000), 's');
}
await writeFile(outPath, JSON.stringify(meshes));
const found = Object.values(meshes).filter(Boolean).length;
console.log('photos', Object.keys(meshes).length, 'with a face', found);
