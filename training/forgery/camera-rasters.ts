/**
 * v4: full-size camera photos as the localiser sees them in the service.
 *
 * For every set folder given (made by server/scripts/camera-forgery-set.py: labels.csv, the
 * camera's untouched file, a re-saved copy and a forgery with masks/<stem>_gt.png), each file is
 * decoded exactly as runLocaliser decodes it (server/src/detectors/image/image-input.ts:
 * decodePixels with the localiser descriptor's maxPixels, stored orientation, sharp's cubic
 * kernel and shrink-on-load) and written as
 *   <out>/<set>-<file stem>.png        the model's input raster (at most 1 MP);
 *   <out>/<set>-<file stem>_mask.png   the forgery's mask at the same size (nearest), forgeries only;
 * with <out>/index.csv (raster, label, kind). Run from the repository root:
 *   node --import tsx training/forgery/camera-rasters.ts <out> <set folder> [<set folder> ...]
 * Data preparation only: it never writes into the repository.
 */
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import sharp from 'sharp';
import { decodePixels, loadImage } from '../../server/src/detectors/image/image-input.js';
import descriptor from '../../server/models/forgery-localiser.json' with { type: 'json' };

const KINDS: Record<string, string> = { u: 'camera-original', r: 'camera-resaved', f: 'camera-forged' };

async function main() {
  const [out, ...sets] = process.argv.slice(2);
  if (!out || sets.length === 0) throw new Error('usage: camera-rasters.ts <out> <set folder> [...]');
  await mkdir(out, { recursive: true });
  const index = join(out, 'index.csv');
  await writeFile(index, 'raster,label,kind\n');
  for (const set of sets) {
    const name = basename(set);
    const lines = (await readFile(join(set, 'labels.csv'), 'utf8')).trim().split('\n').slice(1);
    for (const line of lines) {
      const [file, label] = line.split(',') as [string, string];
      const stem = file.replace(/\.[^.]+$/, '');
      const raster = await decodePixels(await loadImage(join(set, file)), { channels: 3, maxPixels: descriptor.input.maxPixels });
      const target = `${name}-${stem}.png`;
      await sharp(raster.data, { raw: { width: raster.width, height: raster.height, channels: 3 } }).png({ compressionLevel: 1 }).toFile(join(out, target));
      if (label === '1') {
        await sharp(join(set, 'masks', `${stem}_gt.png`)).greyscale().resize(raster.width, raster.height, { fit: 'fill', kernel: 'nearest' }).png().toFile(join(out, `${name}-${stem}_mask.png`));
      }
      await appendFile(index, `${target},${label},${KINDS[file[0]!] ?? 'unknown'}\n`);
    }
    console.log(`${name}: ${lines.length} files`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
