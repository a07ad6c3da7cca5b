/**
 * Human's face box on an LFW photo that is not clipped by the image border: each photo is placed
 * at the centre of a canvas 2.2x its side (the border filled with mid-grey, or with the photo's
 * edge pixels repeated) and the box is read in the photo's own coordinates. Run from server/:
 *   node --import tsx ../training/liveness-context/measure-unclipped.ts /work/data/pad2/images 48 > /work/data/pad2/boxes-unclipped.json
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
  const meta = await sharp(bytes).metadata();
  const pad = Math.round(meta.width! * 0.6);
  const out: Record<string, unknown> = { file, side: meta.width };
  for (const mode of ['grey', 'copy'] as const) {
    const ext = await sharp(bytes)
      .extend({ top: pad, bottom: pad, left: pad, right: pad, ...(mode === 'grey' ? { background: { r: 128, g: 128, b: 128 } } : { extendWith: 'copy' }) })
      .jpeg({ quality: 95 })
      .toBuffer();
    const faces = await analyseFaces(await decodeImage(ext), { emotion: false, spoof: false });
    const b = faces[0]?.box;
    out[mode] = b ? [b[0] - pad, b[1] - pad, b[2], b[3]] : null;
  }
  rows.push(out);
  process.stderr.write(`${JSON.stringify(out)}\n`);
}
process.stdout.write(JSON.stringify(rows, null, 1));
