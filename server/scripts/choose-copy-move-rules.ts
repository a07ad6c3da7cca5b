/**
 * Chooses the rules that decide which regions of the dense copy-move field are copies
 * (`COPY_REGION_RULES` in src/detectors/image/forgery/copy-move.ts) on a labelled folder with
 * masks, at the service's analysis size:
 *
 *   /usr/bin/python3 scripts/copy-move-tuning-set.py ../../shared/data/ai-image/photos /tmp/copy-move-tuning
 *   node --import tsx scripts/choose-copy-move-rules.ts /tmp/copy-move-tuning
 *
 * The dense field (the costly half) is computed once per image; every rule set of the grid is
 * then applied to it. Printed per rule set: untouched images with a copy found, copies found,
 * and the mean pixel F1 of the marked regions (grown by the features' reach) against the masks.
 * Rule (stop 31): fewest untouched images flagged, then the highest F1.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { decodePixels, loadImage } from '../src/detectors/image/image-input.js';
import { COPY_MOVE_MAX_PIXELS } from '../src/detectors/image/forgery.js';
import { copiedRegions, denseField, COPY_REGION_RULES, type CopyRegionRules, type CopySides } from '../src/detectors/image/forgery/copy-move.js';
import { readLabels } from '../src/eval/main.js';

/** Marked pixels grown by r (the map's cells are grown by about as much). */
function grow(marked: Uint8Array, width: number, height: number, r: number): Uint8Array {
  const out = new Uint8Array(marked.length);
  for (let p = 0; p < marked.length; p++) {
    if (!marked[p]) continue;
    const x = p % width, y = (p - x) / width;
    for (let yy = Math.max(0, y - r); yy <= Math.min(height - 1, y + r); yy++) for (let xx = Math.max(0, x - r); xx <= Math.min(width - 1, x + r); xx++) out[yy * width + xx] = 1;
  }
  return out;
}

/** Both sides of every copy found, as the rules were chosen (before the service tells the pasted side from its source). */
function bothSides(sides: CopySides[], n: number): Uint8Array {
  const marked = new Uint8Array(n);
  for (const side of sides) for (const pixels of [side.here, side.there]) for (const p of pixels) marked[p] = 1;
  return marked;
}

async function main() {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: choose-copy-move-rules.ts <folder with labels.csv and masks/>');
  const labels = await readLabels(dir);
  const masks = await readdir(join(dir, 'masks')).catch(() => [] as string[]);
  const items = [];
  for (const { file, label } of labels) {
    const small = await decodePixels(await loadImage(join(dir, file)), { channels: 1, maxPixels: COPY_MOVE_MAX_PIXELS });
    const field = denseField(new Float32Array(small.data), small.width, small.height, new AbortController().signal);
    const maskFile = label === 1 ? masks.find((m) => m.startsWith(file.replace(/\.[^.]+$/, ''))) : undefined;
    const mask = maskFile ? new Uint8Array(await sharp(join(dir, 'masks', maskFile)).greyscale().resize(small.width, small.height, { fit: 'fill', kernel: 'nearest' }).raw().toBuffer()) : null;
    items.push({ label, field, mask });
  }
  const results = [];
  for (const maxFitError of [15, 30, 60]) for (const minAreaShare of [0.002, 0.004]) for (const minShift of [40, 64]) for (const periodicShare of [0.3, 0.5]) for (const ambiguousRatio of [1.5, 2]) {
    const rules: CopyRegionRules = { ...COPY_REGION_RULES, maxFitError, minAreaShare, minShift, periodicShare, ambiguousRatio };
    let flagged = 0, untouched = 0, found = 0, copies = 0;
    const f1s: number[] = [];
    for (const { label, field, mask } of items) {
      const regions = copiedRegions(field, rules);
      if (label === 0) { untouched++; if (regions.shiftVectors.length) flagged++; continue; }
      copies++;
      if (regions.shiftVectors.length) found++;
      if (!mask) continue;
      const marked = grow(bothSides(regions.sides, field.width * field.height), field.width, field.height, 4);
      let tp = 0, fp = 0, fn = 0;
      for (let p = 0; p < marked.length; p++) { const truth = mask[p]! > 127; if (marked[p] && truth) tp++; else if (marked[p]) fp++; else if (truth) fn++; }
      f1s.push(tp ? (2 * tp) / (2 * tp + fp + fn) : 0);
    }
    const f1 = f1s.length ? f1s.reduce((a, b) => a + b, 0) / f1s.length : 0;
    results.push({ rules: { maxFitError, minAreaShare, minShift, periodicShare, ambiguousRatio }, untouchedFlagged: `${flagged}/${untouched}`, flagged, copiesFound: `${found}/${copies}`, f1: Math.round(f1 * 1000) / 1000 });
  }
  results.sort((a, b) => a.flagged - b.flagged || b.f1 - a.f1);
  for (const r of results) console.log(JSON.stringify(r));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
