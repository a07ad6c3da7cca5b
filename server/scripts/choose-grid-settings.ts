/**
 * `node --import tsx scripts/choose-grid-settings.ts <set> [<set> ...] [--chosen]`: how the
 * grid-misalignment map's settings were chosen, on splice sets made by
 * `scripts/splice-tuning-set.py` (PNG forgeries and untouched PNGs, both after a JPEG life;
 * seeds 61-62 chose, seed 63 and the `never` set only measured, with `--chosen`: the shipped
 * settings alone, with the map's pixel precision).
 * For each setting it prints the map's mean pixel F1 at 0.5 over the forgeries and, over the
 * untouched photos, the mean share of blocks at 0.5 or more and how many show a region (a
 * connected 0.5 area of at least MIN_REGION_BLOCKS blocks). The rule, declared before running:
 * no untouched photo may show a region; among the settings that keep it, the highest F1.
 */
import { join } from 'node:path';
import sharp from 'sharp';
import { lumaAndBlocking } from '../src/detectors/image/forgery.js';
import { readLabels } from '../src/eval/main.js';
import { blockDct, clippedBlocks } from '../src/detectors/image/forgery/block-dct.js';
import { estimateJpegGrid, gridMisalignment, GRID_MISALIGNMENT, type GridMisalignmentSettings, type JpegGrid } from '../src/detectors/image/forgery/grid-alignment.js';

const MIN_REGION_BLOCKS = 12;

interface Prepared { name: string; label: number; grid: JpegGrid; clipped: Uint8Array; width: number; height: number; mask: Uint8Array | null; blocking: number }

async function prepare(folder: string): Promise<Prepared[]> {
  const out: Prepared[] = [];
  for (const { file: name, label } of await readLabels(folder)) {
    const { data, info } = await sharp(join(folder, name)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const { luma, blocking } = lumaAndBlocking(data, info.width, info.height);
    // The steps are estimated once per image: every setting reads them.
    const grid = estimateJpegGrid(blockDct(luma, info.width, info.height));
    const mask = label === 1 ? (await sharp(join(folder, 'masks', name.replace(/\.\w+$/, '_gt.png'))).greyscale().raw().toBuffer()) : null;
    out.push({ name: `${folder}/${name}`, label, grid, clipped: clippedBlocks(data, info.width, grid.fullCols, grid.fullRows), width: info.width, height: info.height, mask: mask ? new Uint8Array(mask) : null, blocking });
  }
  return out;
}

/**
 * Largest 4-connected group of cells at `threshold` or more. Not forensic-map's regionsOf: that
 * one joins diagonal neighbours, and the rule was declared and measured with this one.
 */
function largestRegion(values: Float32Array, cols: number, rows: number, threshold: number): number {
  const seen = new Uint8Array(values.length);
  let largest = 0;
  for (let start = 0; start < values.length; start++) {
    if (seen[start] || values[start]! < threshold) continue;
    const stack = [start];
    seen[start] = 1;
    let size = 0;
    while (stack.length) {
      const i = stack.pop()!;
      size++;
      const r = Math.floor(i / cols), c = i % cols;
      for (const [rr, cc] of [[r - 1, c], [r + 1, c], [r, c - 1], [r, c + 1]] as const) {
        if (rr < 0 || cc < 0 || rr >= rows || cc >= cols) continue;
        const j = rr * cols + cc;
        if (!seen[j] && values[j]! >= threshold) { seen[j] = 1; stack.push(j); }
      }
    }
    largest = Math.max(largest, size);
  }
  return largest;
}

/** The map is a probability: a block is marked at 0.5, as the eval marks every map. */
const THRESHOLD = 0.5;

function score(images: Prepared[], settings: GridMisalignmentSettings) {
  const threshold = THRESHOLD;
  const f1s: number[] = [], falseAreas: number[] = [];
  let hits = 0, marked = 0;
  let regions = 0, ran = 0;
  const flagged: string[] = [];
  for (const image of images) {
    const result = gridMisalignment(image.grid, image.clipped, settings);
    if (!result) { if (image.mask) f1s.push(0); continue; }
    ran++;
    const map = result.values;
    if (!image.mask) {
      let hot = 0;
      for (const v of map) if (v >= threshold) hot++;
      falseAreas.push(hot / map.length);
      if (largestRegion(map, result.cols, result.rows, threshold) >= MIN_REGION_BLOCKS) { regions++; flagged.push(image.name.split('/').pop()!); }
      continue;
    }
    let tp = 0, fp = 0, fn = 0;
    for (let y = 0; y < image.height; y++) {
      for (let x = 0; x < image.width; x++) {
        const bx = Math.min(result.cols - 1, x >> 3), by = Math.min(result.rows - 1, y >> 3);
        const predicted = map[by * result.cols + bx]! >= threshold, truth = image.mask[y * image.width + x]! > 127;
        if (predicted && truth) tp++; else if (predicted) fp++; else if (truth) fn++;
      }
    }
    f1s.push(tp ? (2 * tp) / (2 * tp + fp + fn) : 0);
    hits += tp; marked += tp + fp;
  }
  const mean = (a: number[]) => a.reduce((s, v) => s + v, 0) / Math.max(1, a.length);
  return { f1: mean(f1s), precision: marked ? hits / marked : 0, falseArea: mean(falseAreas), regions, ran, flagged };
}

async function main() {
  const images = (await Promise.all(process.argv.slice(2).filter((a) => !a.startsWith('--')).map(prepare))).flat();
  console.log(`${images.length} images; blocking <= 1.08 in ${images.filter((i) => i.blocking <= 1.08).length}`);
  if (process.argv.includes('--chosen')) {
    const s = score(images, GRID_MISALIGNMENT);
    return console.log(JSON.stringify({ ...GRID_MISALIGNMENT, f1: +s.f1.toFixed(3), precision: +s.precision.toFixed(3), falseArea: +s.falseArea.toFixed(4), untouchedWithRegion: s.regions, ran: s.ran, flagged: s.flagged.join(' ') }));
  }
  for (const frequencies of [8, 15, 24]) {
    for (const outliers of [0.03, 0.1, 0.3]) {
      for (const radius of [1, 2]) {
        for (const priorLogOdds of [0, -3, -6, -12]) {
          const s = score(images, { frequencies, outliers, radius, priorLogOdds });
          console.log(JSON.stringify({ frequencies, outliers, radius, priorLogOdds, f1: +s.f1.toFixed(3), falseArea: +s.falseArea.toFixed(4), untouchedWithRegion: s.regions, ran: s.ran, flagged: s.flagged.slice(0, 8).join(' ') }));
        }
      }
    }
  }
}

main().catch((error) => { console.error(error); process.exit(1); });
