/**
 * Measures Human's face box (server/src/detectors/face/face-analysis.ts analyseFaces, the box the
 * context model is cut around at inference) on LFW photos of muxspace/facial_expressions, so that
 * prepare.py's crops reproduce the inference geometry. Run from server/:
 *   node --import tsx ../training/liveness-context/measure-boxes.ts /work/data/pad2/images 48 > /work/data/pad2/boxes.json
 * Photos: every k-th LFW-named file in name order (k = files / count); also each at 2x to check
 * that the box scales with the image.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { analyseFaces } from '../../server/src/detectors/face/face-analysis.js';
import { decodeImage } from '../../server/src/detectors/face/image-input.js';

const dir = process.argv[2]!;
const count = Number(process.argv[3] ?? 48);
const files = readdirSync(dir).filter((f) => /_\d{4}\.jpe?g$/i.test(f)).sort();
const step = Math.floor(files.length / count);
const rows: unknown[] = [];
for (let k = 0; k < count; k++) {
  const file = files[k * step + 7]!;
  const bytes = readFileSync(join(dir, file));
  const image = await decodeImage(bytes);
  const faces = await analyseFaces(image, { emotion: false, spoof: false });
  let twice: number[] | null = null;
  if (k % 4 === 0) {
    const big = await sharp(bytes).resize(image.width * 2, image.height * 2).jpeg({ quality: 95 }).toBuffer();
    const f2 = await analyseFaces(await decodeImage(big), { emotion: false, spoof: false });
    twice = f2[0]?.box ?? null;
  }
  rows.push({ file, width: image.width, height: image.height, faces: faces.length, box: faces[0]?.box ?? null, score: faces[0]?.detectionScore ?? null, boxAt2x: twice });
  process.stderr.write(`${file} ${JSON.stringify(faces[0]?.box)}\n`);
}
process.stdout.write(JSON.stringify(rows, null, 1));
