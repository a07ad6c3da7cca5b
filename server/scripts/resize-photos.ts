/**
 * Scales every JPEG of a labelled folder as messaging apps send photos, for `npm run eval`: the long
 * side to `--side` pixels (1600 by default; never enlarged; 0 keeps the size), saved at JPEG
 * `--quality` (70) by sharp, in the stored orientation, without metadata. With `--resave Q` the
 * result is decoded and saved once more at quality Q at the same size, on the same 8x8 grid: an
 * untouched photo compressed twice, as when a downloaded photo is saved again by an editor or app.
 * A quality may be a range (`55-80`): each file then gets a whole quality from it, chosen by a hash
 * of its name, so a folder is rebuilt identically. Files sharp cannot decode are skipped and named.
 * With `--megapixels M` each photo is scaled to about M million pixels instead (its aspect kept),
 * as small uploads and thumbnails come. The output's labels.csv keeps each written file's label.
 *
 *   node --import tsx scripts/resize-photos.ts <labelled folder> <output folder> [--side 1600 | --megapixels 0.24] [--quality 70] [--resave 85-95]
 */
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { readLabels } from '../src/eval/main.js';

type QualityRange = { low: number; high: number };

function parseQuality(name: string, text: string): QualityRange {
  const parts = text.split('-').map(Number);
  const low = parts[0] ?? NaN, high = parts[1] ?? low;
  if (!(parts.length <= 2 && Number.isInteger(low) && Number.isInteger(high) && low >= 1 && high <= 100 && low <= high)) throw new Error(`--${name} takes a quality 1 to 100 or a range such as 55-80; got ${text}`);
  return { low, high };
}

/** A whole quality of the range, the same for a file's name at every run. */
function qualityFor(range: QualityRange, file: string, salt: string): number {
  const draw = createHash('sha256').update(`${salt}:${file}`).digest().readUInt32BE(0);
  return range.low + (draw % (range.high - range.low + 1));
}

async function main() {
  const [source, output] = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !all[i - 1]?.startsWith('--'));
  if (!source || !output) throw new Error('usage: resize-photos.ts <labelled folder> <output folder> [--side 1600 | --megapixels 0.24] [--quality 70] [--resave 85-95]');
  const option = (name: string) => {
    const at = process.argv.indexOf(`--${name}`);
    return at > 0 ? process.argv[at + 1] ?? 'nothing' : undefined;
  };
  const side = Number(option('side') ?? 1600);
  if (!(Number.isInteger(side) && side >= 0)) throw new Error(`--side takes a whole number of pixels (0 keeps the size); got ${option('side')}`);
  const megapixels = option('megapixels') === undefined ? null : Number(option('megapixels'));
  if (megapixels !== null && !(megapixels > 0)) throw new Error(`--megapixels takes a positive number; got ${option('megapixels')}`);
  const quality = parseQuality('quality', option('quality') ?? '70');
  const resaveText = option('resave');
  const resave = resaveText === undefined ? null : parseQuality('resave', resaveText);
  await mkdir(output, { recursive: true });
  const labels = await readLabels(source);
  const written: string[] = [];
  for (const { file, label } of labels) {
    try {
      // As the service opens uploads: a warning (some Samsung phones write odd scan headers) is not a failure.
      const opened = sharp(join(source, file), { failOn: 'truncated' });
      let scaled = side > 0 ? opened.resize({ width: side, height: side, fit: 'inside', withoutEnlargement: true }) : opened;
      if (megapixels !== null) {
        const { width = 0, height = 0 } = await sharp(join(source, file), { failOn: 'truncated' }).metadata();
        const scale = Math.sqrt((megapixels * 1e6) / (width * height));
        scaled = opened.resize({ width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)), fit: 'fill' });
      }
      let bytes = await scaled.jpeg({ quality: qualityFor(quality, file, 'first') }).toBuffer();
      if (resave) bytes = await sharp(bytes).jpeg({ quality: qualityFor(resave, file, 'second') }).toBuffer();
      await writeFile(join(output, file), bytes);
      written.push(`${file},${label}`);
    } catch (error) {
      console.error(`skipped ${file}: ${(error as Error).message}`);
    }
  }
  await writeFile(join(output, 'labels.csv'), `file,label\n${written.join('\n')}\n`);
  const describe = (range: QualityRange) => (range.low === range.high ? `${range.low}` : `${range.low}-${range.high}`);
  console.log(`${written.length} of ${labels.length} written to ${output} (${megapixels !== null ? `${megapixels} MP` : `long side ${side || 'kept'}`}, quality ${describe(quality)}${resave ? `, saved again at ${describe(resave)}` : ''})`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
