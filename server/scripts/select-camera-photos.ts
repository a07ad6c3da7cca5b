/**
 * Chooses untouched camera photos for the forgery sets of scripts/camera-forgery-set.py.
 *
 *   node --import tsx scripts/select-camera-photos.ts <folder of JPEGs, searched recursively> <output folder> [--min-side 1000]
 *
 * A photo is kept when its EXIF names a camera (Make and Model), no editing software is named
 * (Software, ProcessingSoftware), its pixel size is the one the camera recorded (when it recorded
 * one: a resized copy is not a camera original), its short side is at least --min-side and sharp
 * decodes it whole. One photo per camera model (the largest), so no camera's JPEG tables and
 * sensor noise dominate. Camera models are split in two by a hash of make and model: `fit/`
 * (for scripts/fit-forgery.ts) and `check/` (measures only), as symbolic links, with
 * `selection.json` listing each file's source, camera and size.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import exifr from 'exifr';
import sharp from 'sharp';

const EDITORS = /photoshop|gimp|lightroom|paint|picasa|acdsee|irfanview|snapseed|capture one|aperture|photos \d|darktable|rawtherapee|digikam|affinity|pixelmator|luminar|instagram|windows photo|preview|imagemagick|graphicconverter|faststone|xnview|photoscape|photo ?studio/i;

async function* jpegs(folder: string): AsyncGenerator<string> {
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) yield* jpegs(path);
    else if (/\.jpe?g$/i.test(entry.name)) yield path;
  }
}

interface Candidate { path: string; camera: string; width: number; height: number }

async function candidate(path: string, minSide: number): Promise<Candidate | string> {
  const exif = await exifr.parse(path, { tiff: true, exif: true, ifd1: false, xmp: false, icc: false, iptc: false }).catch(() => null);
  const make = String(exif?.Make ?? '').trim(), model = String(exif?.Model ?? '').trim();
  if (!make || !model) return 'no camera in EXIF';
  const software = `${exif?.Software ?? ''} ${exif?.ProcessingSoftware ?? ''}`;
  if (EDITORS.test(software)) return `edited (${software.trim()})`;
  const decoded = await sharp(path, { failOn: 'error' }).raw().toBuffer({ resolveWithObject: true }).catch(() => null);
  if (!decoded) return 'does not decode';
  const { width, height } = decoded.info;
  const recorded = [Number(exif?.ExifImageWidth ?? exif?.PixelXDimension ?? 0), Number(exif?.ExifImageHeight ?? exif?.PixelYDimension ?? 0)];
  if (recorded[0] && recorded[1] && !(recorded[0] === width && recorded[1] === height) && !(recorded[0] === height && recorded[1] === width)) return `resized (${width}x${height}, camera recorded ${recorded.join('x')})`;
  if (Math.min(width, height) < minSide) return `small (${width}x${height})`;
  return { path, camera: `${make} | ${model}`.replace(/\s+/g, ' ').toLowerCase(), width, height };
}

async function main() {
  const [source, output] = process.argv.slice(2).map((arg) => resolve(arg));
  if (!source || !output) throw new Error('usage: select-camera-photos.ts <folder of JPEGs> <output folder> [--min-side 1000]');
  const minSideIndex = process.argv.indexOf('--min-side');
  const minSide = minSideIndex > 0 ? Number(process.argv[minSideIndex + 1]) : 1000;
  const byCamera = new Map<string, Candidate>();
  const refused = new Map<string, number>();
  for await (const path of jpegs(source)) {
    const found = await candidate(path, minSide);
    if (typeof found === 'string') {
      const reason = found.split(' (')[0]!;
      refused.set(reason, (refused.get(reason) ?? 0) + 1);
      continue;
    }
    const kept = byCamera.get(found.camera);
    if (!kept || found.width * found.height > kept.width * kept.height) byCamera.set(found.camera, found);
  }
  const selection: Array<Candidate & { split: string; file: string; source: string }> = [];
  for (const split of ['fit', 'check']) await mkdir(join(output, split), { recursive: true });
  for (const photo of [...byCamera.values()].sort((a, b) => a.camera.localeCompare(b.camera))) {
    const split = createHash('sha256').update(photo.camera).digest()[0]! % 2 === 0 ? 'fit' : 'check';
    const file = `${photo.camera.replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')}.jpg`;
    await symlink(photo.path, join(output, split, file));
    selection.push({ ...photo, split, file, source: relative(source, photo.path) });
  }
  await writeFile(join(output, 'selection.json'), `${JSON.stringify(selection.map(({ path: _path, ...rest }) => rest), null, 2)}\n`);
  console.log(`kept ${selection.length} camera models (fit ${selection.filter((s) => s.split === 'fit').length}, check ${selection.filter((s) => s.split === 'check').length}); refused:`, Object.fromEntries(refused));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
