/**
 * Scales every JPEG of a labelled folder as messaging apps send photos, for `npm run eval`: the long
 * side to `--side` pixels (1600 by default; never enlarged), saved at JPEG `--quality` (70) by sharp,
 * in the stored orientation, without metadata. Files sharp cannot decode are skipped and named. The
 * output's labels.csv keeps each written file's label.
 *
 *   node --import tsx scripts/resize-photos.ts <labelled folder> <output folder> [--side 1600] [--quality 70]
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { readLabels } from '../src/eval/main.js';

async function main() {
  const [source, output] = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !all[i - 1]?.startsWith('--'));
  if (!source || !output) throw new Error('usage: resize-photos.ts <labelled folder> <output folder> [--side 1600] [--quality 70]');
  const option = (name: string, fallback: number) => {
    const at = process.argv.indexOf(`--${name}`);
    return at > 0 ? Number(process.argv[at + 1]) : fallback;
  };
  const side = option('side', 1600), quality = option('quality', 70);
  if (!(Number.isInteger(side) && side > 0 && Number.isInteger(quality) && quality >= 1 && quality <= 100)) throw new Error(`--side takes a positive whole number of pixels and --quality 1 to 100; got ${side} and ${quality}`);
  await mkdir(output, { recursive: true });
  const labels = await readLabels(source);
  const written: string[] = [];
  for (const { file, label } of labels) {
    try {
      // As the service opens uploads: a warning (some Samsung phones write odd scan headers) is not a failure.
      const bytes = await sharp(join(source, file), { failOn: 'truncated' }).resize({ width: side, height: side, fit: 'inside', withoutEnlargement: true }).jpeg({ quality }).toBuffer();
      await writeFile(join(output, file), bytes);
      written.push(`${file},${label}`);
    } catch (error) {
      console.error(`skipped ${file}: ${(error as Error).message}`);
    }
  }
  await writeFile(join(output, 'labels.csv'), `file,label\n${written.join('\n')}\n`);
  console.log(`${written.length} of ${labels.length} written to ${output} (long side ${side}, quality ${quality})`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
