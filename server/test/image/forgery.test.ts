import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import detector, { analyzeImageForgery, fillDecides, fuseScore, GEOMETRY_MAX_PIXELS, imageWeights, withFilledRegion, type ForgeryRegion } from '../../src/detectors/image/forgery.js';
import type { MethodResult } from '../../src/detectors/image/forgery/method.js';
import { MIN_STRONGEST_GAIN } from '../../src/detectors/image/forgery/double-jpeg.js';
import { MIN_SPREAD as NOISE_MIN_SPREAD } from '../../src/detectors/image/forgery/noise-level.js';
import { robustOutlierMap } from '../../src/detectors/image/forensic-map.js';
import { uprightBox } from '../../src/detectors/image/image-input.js';
import type { VerdictResult } from '../../src/detectors/result.js';
import { MediaError, type Signal } from '../../src/detectors/types.js';
import fusion from '../../src/detectors/image/forgery-fusion.json' with { type: 'json' };
import { cameraLikeRgb, copyBlock, detectorInput, jpegLife, mapAgainstBox, naturalRgb, tempDir, writeJpeg, writePng } from './helpers.js';

const signal = new AbortController().signal;
const W = 384, H = 320;

/** The detector's result: the verdict envelope, its regions and what decided. */
type ForgeryResult = VerdictResult & { regions: ForgeryRegion[]; analysisDetails: { decidedBy: string } };
/** The copy-move signal's evidence, as far as these tests read it. */
type CopyMoveEvidence = {
  shiftVectors: Array<{ shift: string }>;
  whichSidePasted: Array<{ pasted: unknown; residualRatio: number; singleCompressionGap: number | null }>;
};
/** Every method's signal evidence says why the method was skipped, when it was. */
type MethodEvidence = Pick<MethodResult, 'skipped'>;

test('a copy-moved region is found, boxed with its method, and drawn in a heatmap the size of the input', async () => {
  const dir = await tempDir();
  const base = naturalRgb(W, H, 21);
  const target = { x: 250, y: 190, w: 80, h: 80 };
  const forged = copyBlock(base, W, base, W, 30, 40, target.x, target.y, target.w, target.h);
  const forgedPath = await writeJpeg(dir, 'copy-move.jpg', forged, W, H, 92);
  const authenticPath = await writeJpeg(dir, 'authentic.jpg', base, W, H, 92);

  const forgedResult = await analyzeImageForgery(forgedPath, signal);
  const authenticResult = await analyzeImageForgery(authenticPath, signal);
  const copyMove = forgedResult.signals.find((s) => s.id === 'copy-move')!;
  assert.ok(
    (copyMove.evidence as CopyMoveEvidence).shiftVectors.some((v) => {
      const [dx, dy] = v.shift.split(',').map(Number) as [number, number];
      return Math.abs(dx - 220) <= 1 && Math.abs(dy - 150) <= 1;
    }),
    JSON.stringify(copyMove.evidence),
  );
  const region = forgedResult.regions.find((r) => r.method === 'copy-move' && r.x < target.x + target.w && r.x + r.width > target.x && r.y < target.y + target.h && r.y + r.height > target.y);
  assert.ok(region, JSON.stringify(forgedResult.regions));
  // Moved by whole pixels in a JPEG compressed once, the copy is the same pixels as its source:
  // no cue says which was pasted, and both are marked.
  const decisions = (copyMove.evidence as CopyMoveEvidence).whichSidePasted;
  assert.ok(decisions.length > 0 && decisions.every((d) => d.pasted === null && d.residualRatio > 0.9 && d.singleCompressionGap === null), JSON.stringify(decisions));
  const sourceRegion = forgedResult.regions.find((r) => r.method === 'copy-move' && r.x < 30 + 80 && r.x + r.width > 30 && r.y < 40 + 80 && r.y + r.height > 40);
  assert.ok(sourceRegion, JSON.stringify(forgedResult.regions));
  assert.equal((authenticResult.signals.find((s) => s.id === 'copy-move')!.evidence as CopyMoveEvidence).shiftVectors.length, 0);
  assert.ok(forgedResult.score > authenticResult.score, `forged ${forgedResult.score} authentic ${authenticResult.score}`);

  const meta = await sharp(forgedResult.heatmapPng).metadata();
  assert.deepEqual([meta.format, meta.width, meta.height, meta.channels], ['png', W, H, 1]);
  const heatmap = await sharp(forgedResult.heatmapPng).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
  const at = (x: number, y: number) => heatmap.data[y * W + x]!;
  const median = [...heatmap.data].sort((a, b) => a - b)[heatmap.data.length >> 1]!;
  assert.ok(at(target.x + 40, target.y + 40) > 128 && median < 64, `inside ${at(target.x + 40, target.y + 40)} median ${median}`);
});

test('copy-move finds copies moved purely horizontally or vertically, but not the periods of a tiled texture', async () => {
  const dir = await tempDir();
  const base = naturalRgb(W, H, 33);
  const shiftsOf = async (path: string) => {
    const analysis = await analyzeImageForgery(path, signal);
    const evidence = analysis.signals.find((s) => s.id === 'copy-move')!.evidence as CopyMoveEvidence;
    return evidence.shiftVectors.map((v) => v.shift.split(',').map(Number) as [number, number]);
  };
  const horizontal = await shiftsOf(await writeJpeg(dir, 'horizontal.jpg', copyBlock(base, W, base, W, 30, 120, 230, 120, 80, 80), W, H, 92));
  assert.ok(horizontal.some(([dx, dy]) => Math.abs(dx - 200) <= 1 && Math.abs(dy) <= 1), JSON.stringify(horizontal));
  const vertical = await shiftsOf(await writeJpeg(dir, 'vertical.jpg', copyBlock(base, W, base, W, 150, 20, 150, 200, 80, 80), W, H, 92));
  assert.ok(vertical.some(([dx, dy]) => Math.abs(dx) <= 1 && Math.abs(Math.abs(dy) - 180) <= 1), JSON.stringify(vertical));

  // A 64-pixel tile repeated: every block matches at (64, 0), (0, 64), (64, 64)... and at twice those.
  const tile = naturalRgb(64, 64, 4);
  const tiled = Buffer.alloc(W * H * 3);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) tile.copy(tiled, (y * W + x) * 3, ((y % 64) * 64 + (x % 64)) * 3, ((y % 64) * 64 + (x % 64)) * 3 + 3);
  assert.deepEqual(await shiftsOf(await writeJpeg(dir, 'tiled.jpg', tiled, W, H, 92)), []);
});

test('copy-move finds a copy rotated before it was pasted, and marks only the copy: its resampling tells it from the source', async () => {
  const dir = await tempDir();
  // Camera-like pixel noise on the scene: the copy's interpolation smooths it, which tells the copy from its source.
  const base = cameraLikeRgb(W, H, 47);
  // A disk of radius 40 around (90, 100), rotated by 25° (bilinear) and pasted around (280, 210).
  const forged = Buffer.from(base);
  const [sx, sy, tx, ty, r, angle] = [90, 100, 280, 210, 40, (25 * Math.PI) / 180];
  for (let y = ty - r; y <= ty + r; y++) {
    for (let x = tx - r; x <= tx + r; x++) {
      const dx = x - tx, dy = y - ty;
      if (dx * dx + dy * dy > r * r) continue;
      const fx = sx + Math.cos(angle) * dx - Math.sin(angle) * dy, fy = sy + Math.sin(angle) * dx + Math.cos(angle) * dy;
      const x0 = Math.floor(fx), y0 = Math.floor(fy), wx = fx - x0, wy = fy - y0;
      for (let c = 0; c < 3; c++) {
        const at = (xx: number, yy: number) => base[(yy * W + xx) * 3 + c]!;
        forged[(y * W + x) * 3 + c] = Math.round((1 - wy) * ((1 - wx) * at(x0, y0) + wx * at(x0 + 1, y0)) + wy * ((1 - wx) * at(x0, y0 + 1) + wx * at(x0 + 1, y0 + 1)));
      }
    }
  }
  const analysis = await analyzeImageForgery(await writeJpeg(dir, 'rotated.jpg', forged, W, H, 92), signal);
  type Box = { x: number; y: number; width: number; height: number };
  const evidence = analysis.signals.find((s) => s.id === 'copy-move')!.evidence as { shiftVectors: Array<{ shift: string }>; whichSidePasted: Array<{ residualRatio: number; pasted: Box | null; source: Box | null }> };
  assert.ok(evidence.shiftVectors.length > 0, JSON.stringify(evidence));
  // The block matcher this replaced compared unrotated blocks and found nothing here.
  const contains = (box: Box | null, x: number, y: number) => !!box && x >= box.x && x < box.x + box.width && y >= box.y && y < box.y + box.height;
  const [decision] = evidence.whichSidePasted;
  assert.ok(decision && contains(decision.pasted, tx, ty) && contains(decision.source, sx, sy), JSON.stringify(evidence.whichSidePasted));
  const map = analysis.maps.byMethod['copy-move']!;
  const copy = mapAgainstBox(map, analysis.maps.cols, analysis.maps.cell, { x: tx - 25, y: ty - 25, w: 50, h: 50 });
  const source = mapAgainstBox(map, analysis.maps.cols, analysis.maps.cell, { x: sx - 25, y: sy - 25, w: 50, h: 50 });
  assert.ok(copy.inside > 0.5 && source.inside < 0.2 && copy.outside < 0.2, `copy ${JSON.stringify(copy)} source ${JSON.stringify(source)}`);
});

/**
 * A camera-like scene compressed at quality 70, a 96-pixel block of it copied by (203, 149) —
 * not a multiple of 8 either way, as almost every copy an editor makes — then saved again as
 * JPEG or PNG. Returns which side the copy-move evidence says was pasted, and its map inside each.
 */
async function wholePixelCopy(save: 'jpeg' | 'png') {
  const dir = await tempDir();
  const decoded = await jpegLife(cameraLikeRgb(W, H, 60), W, H, 70);
  const source = { x: 40, y: 30, w: 96, h: 96 }, target = { x: 243, y: 179 };
  const copied = copyBlock(decoded, W, decoded, W, source.x, source.y, target.x, target.y, source.w, source.h);
  const path = save === 'jpeg' ? await writeJpeg(dir, 'copied.jpg', copied, W, H, 90) : await writePng(dir, 'copied.png', copied, W, H);
  const analysis = await analyzeImageForgery(path, signal);
  type Box = { x: number; y: number; width: number; height: number };
  const evidence = analysis.signals.find((s) => s.id === 'copy-move')!.evidence as { whichSidePasted: Array<{ decidedBy: string[] | string | null; residualRatio: number; pasted: Box | null; source: Box | null }> };
  const contains = (box: Box | null, x: number, y: number) => !!box && x >= box.x && x < box.x + box.width && y >= box.y && y < box.y + box.height;
  const [decision] = evidence.whichSidePasted;
  const map = analysis.maps.byMethod['copy-move']!;
  return {
    decision,
    evidence: JSON.stringify(evidence.whichSidePasted),
    copyFound: !!decision && contains(decision.pasted, target.x + 48, target.y + 48) && contains(decision.source, source.x + 48, source.y + 48),
    copy: mapAgainstBox(map, analysis.maps.cols, analysis.maps.cell, { x: target.x + 16, y: target.y + 16, w: 64, h: 64 }),
    original: mapAgainstBox(map, analysis.maps.cols, analysis.maps.cell, { x: source.x + 16, y: source.y + 16, w: 64, h: 64 }),
  };
}

test('a copy moved by whole pixels inside a JPEG saved twice: the copy left the first 8x8 grid, so only it is marked', async () => {
  const { decision, evidence, copyFound, copy, original } = await wholePixelCopy('jpeg');
  assert.ok(decision && JSON.stringify(decision.decidedBy) === '["recompression"]' && decision.residualRatio > 0.85, evidence);
  assert.ok(copyFound, evidence);
  assert.ok(copy.inside > 0.5 && original.inside < 0.2, `copy ${JSON.stringify(copy)} source ${JSON.stringify(original)}`);
});

test('the same copy in a JPEG later saved as PNG: the source still sits on the JPEG grid and the copy does not', async () => {
  const { decision, evidence, copyFound, copy, original } = await wholePixelCopy('png');
  assert.ok(decision && JSON.stringify(decision.decidedBy) === '["grid alignment"]', evidence);
  assert.ok(copyFound, evidence);
  assert.ok(copy.inside > 0.5 && original.inside < 0.2, `copy ${JSON.stringify(copy)} source ${JSON.stringify(original)}`);
});

test('a region pasted into a double-compressed JPEG stands out in the aligned double-JPEG map', async () => {
  const dir = await tempDir();
  const decoded = await jpegLife(naturalRgb(W, H, 5), W, H, 60, { chromaSubsampling: '4:4:4' });
  const donor = naturalRgb(W, H, 99); // never compressed
  const box = { x: 128, y: 96, w: 128, h: 128 };
  const spliced = copyBlock(decoded, W, donor, W, 40, 40, box.x, box.y, box.w, box.h);
  const path = await writeJpeg(dir, 'spliced.jpg', spliced, W, H, 85);
  const analysis = await analyzeImageForgery(path, signal);
  const dq = analysis.signals.find((s) => s.id === 'double-jpeg')!;
  assert.equal((dq.evidence as { doubleCompressed: boolean }).doubleCompressed, true, JSON.stringify(dq.evidence));
  const { inside, outside } = mapAgainstBox(analysis.maps.byMethod['double-jpeg']!, analysis.maps.cols, analysis.maps.cell, box);
  assert.ok(inside > outside + 0.3, `inside ${inside} outside ${outside}`);
});

test('a splice from another JPEG, pasted off the grid into a JPEG later saved as PNG, is localised by grid misalignment', async () => {
  const dir = await tempDir();
  const host = await jpegLife(cameraLikeRgb(W, H, 70), W, H, 75), donor = await jpegLife(cameraLikeRgb(W, H, 80), W, H, 85);
  // Shift (166, 90): not a multiple of 8, so the donor's blocks straddle the host's grid.
  const box = { x: 203, y: 141, w: 112, h: 112 };
  const spliced = copyBlock(host, W, donor, W, 37, 51, box.x, box.y, box.w, box.h);
  const analysis = await analyzeImageForgery(await writePng(dir, 'spliced.png', spliced, W, H), signal);
  const untouched = await analyzeImageForgery(await writePng(dir, 'untouched.png', host, W, H), signal);

  const grid = analysis.signals.find((s) => s.id === 'grid-alignment')!;
  assert.ok(grid.score !== null && (grid.evidence as { steps: Array<number | null> }).steps.some((q) => q !== null), JSON.stringify(grid.evidence));
  const { iou } = mapAgainstBox(analysis.maps.byMethod['grid-alignment']!, analysis.maps.cols, analysis.maps.cell, box);
  // Measured 0.89 on this scene; the floor leaves room for decoder differences.
  assert.ok(iou > 0.6, `IoU ${iou}`);
  assert.ok(analysis.regions.some((r) => r.methods.includes('grid-alignment') && r.x < box.x + box.w && r.x + r.width > box.x && r.y < box.y + box.h && r.y + r.height > box.y), JSON.stringify(analysis.regions));
  // A region names only methods whose own weighted evidence lit it (reached the region
  // threshold in or beside the box), the one with most evidence inside first.
  for (const region of analysis.regions) {
    assert.ok(region.methods.length && region.methods[0] === region.method, JSON.stringify(region));
    for (const id of region.methods) {
      const { cols, rows, cell } = analysis.maps;
      const map = analysis.maps.byMethod[id]!;
      let peak = 0;
      for (let r = Math.max(0, Math.floor(region.y / cell) - 1); r <= Math.min(rows - 1, Math.floor((region.y + region.height - 1) / cell) + 1); r++) {
        for (let c = Math.max(0, Math.floor(region.x / cell) - 1); c <= Math.min(cols - 1, Math.floor((region.x + region.width - 1) / cell) + 1); c++) peak = Math.max(peak, map[r * cols + c]!);
      }
      assert.ok(fusion.reliability[id as keyof typeof fusion.reliability] * peak >= 0.4, `${id} listed at weighted peak ${peak}: ${JSON.stringify(region)}`);
    }
  }
  const untouchedMap = untouched.maps.byMethod['grid-alignment']!;
  assert.ok(untouchedMap && Math.max(...untouchedMap) < 0.5, 'the untouched PNG must read on-grid everywhere');
  // The map's fitted image-level weight carries the splice into the score.
  assert.ok(analysis.score > untouched.score + 0.2, `spliced ${analysis.score} untouched ${untouched.score}`);
});

test('a greyscale PNG with a JPEG past: its history is still read, but grid misalignment does not run', async () => {
  // A colour photo turned grey hides its clipped colour blocks, which read as off the grid (stop 81).
  const dir = await tempDir();
  const host = await jpegLife(cameraLikeRgb(W, H, 70), W, H, 75);
  const colour = await writePng(dir, 'colour.png', host, W, H);
  const grey = join(dir, 'grey.png');
  await sharp(colour).greyscale().toColourspace('b-w').png().toFile(grey);
  const analysis = await analyzeImageForgery(grey, signal);
  const grid = analysis.signals.find((s) => s.id === 'grid-alignment')!;
  assert.equal(grid.score, null);
  assert.match(String((grid.evidence as { skipped?: string }).skipped), /greyscale/);
  assert.match(analysis.compressionHistory.note, /JPEG before|JPEG's quantiser steps/, 'the JPEG past is still recognised');
  assert.notEqual(analysis.signals.find((s) => s.id === 'ela')!.score, null, 'ELA still runs');
  const inColour = await analyzeImageForgery(colour, signal);
  assert.notEqual(inColour.signals.find((s) => s.id === 'grid-alignment')!.score, null, 'the colour PNG keeps the map');
});

test('a never-compressed PNG says plainly that compression methods have nothing to see', async () => {
  const dir = await tempDir();
  const path = await writePng(dir, 'clean.png', naturalRgb(W, H, 8), W, H);
  const analysis = await analyzeImageForgery(path, signal);
  assert.match(analysis.compressionHistory.note, /no compression history/);
  for (const id of ['ela', 'jpeg-ghost', 'double-jpeg', 'grid-alignment']) {
    const method = analysis.signals.find((s) => s.id === id)!;
    assert.equal(method.score, null);
    assert.ok((method.evidence as MethodEvidence).skipped, id);
  }
  assert.deepEqual(analysis.methodsRun.sort(), ['copy-move', 'noise-level']);
});

test('a JPEG scaled and saved as PNG shows blocking-like steps but no quantiser steps: it is treated as having no JPEG past', async () => {
  const dir = await tempDir();
  const W2 = 480, H2 = 400;
  const jpeg = await sharp(naturalRgb(W2, H2, 9), { raw: { width: W2, height: H2, channels: 3 } }).jpeg({ quality: 40 }).toBuffer();
  const path = join(dir, 'scaled.png');
  await sharp(jpeg).resize(360, 300).png().toFile(path);
  const analysis = await analyzeImageForgery(path, signal);
  // Measured 1.20: over the 1.08 that alone used to count as a JPEG past.
  assert.ok(analysis.compressionHistory.blockingInPixels > 1.08, JSON.stringify(analysis.compressionHistory));
  assert.match(analysis.compressionHistory.note, /no compression history/);
  assert.deepEqual(analysis.methodsRun.sort(), ['copy-move', 'noise-level']);
});

test('a photo scaled down and recompressed as messaging apps send it is not called forged: double-JPEG finds no trace of its first compression', async () => {
  const dir = await tempDir();
  // A camera JPEG twice the size, scaled to half and saved at quality 70: the scaling moved its
  // first compression off the final grid, so no aligned double quantisation is left to find.
  const camera = await sharp(cameraLikeRgb(2 * W, 2 * H, 21), { raw: { width: 2 * W, height: 2 * H, channels: 3 } }).jpeg({ quality: 92 }).toBuffer();
  const sentPath = join(dir, 'sent.jpg');
  await writeFile(sentPath, await sharp(camera).resize(W, H).jpeg({ quality: 70 }).toBuffer());
  const sent = await analyzeImageForgery(sentPath, signal);
  // Before the empty-bin check first quantisers one or two steps above the last were "found" here (map peak 0.53).
  const doubleJpeg = sent.signals.find((s) => s.id === 'double-jpeg')!;
  assert.match(String((doubleJpeg.evidence as MethodEvidence).skipped), /no double-quantisation trace/, JSON.stringify(doubleJpeg.evidence));
  assert.ok(sent.score < 0.5, `score ${sent.score}`);
});

test('a weak double-quantisation trace left by resizing between two compressions localises nothing', async () => {
  const dir = await tempDir();
  // Scaled by 0.4 (as 4000 px phone photos are sent at 1600 px), part of the first JPEG's blocking
  // meets the final grid every few blocks: this one shows a first quantiser at one frequency,
  // gaining 0.09 nats per coefficient, and its map used to mark blocks at random.
  const camera = await sharp(cameraLikeRgb(1000, 750, 5), { raw: { width: 1000, height: 750, channels: 3 } }).jpeg({ quality: 92 }).toBuffer();
  const sentPath = join(dir, 'sent.jpg');
  await writeFile(sentPath, await sharp(camera).resize(400, 300).jpeg({ quality: 70 }).toBuffer());
  const sent = await analyzeImageForgery(sentPath, signal);
  const evidence = sent.signals.find((s) => s.id === 'double-jpeg')!.evidence as MethodEvidence & { frequencies: Array<{ q1: number | null; gain: number }> };
  const found = evidence.frequencies.filter((f) => f.q1 !== null);
  assert.ok(found.length > 0 && found.every((f) => f.gain < MIN_STRONGEST_GAIN), JSON.stringify(evidence));
  assert.match(String(evidence.skipped), /too weak to localise/);
  assert.equal(sent.maps.byMethod['double-jpeg'], undefined);
});

test('an untouched photo saved twice on one grid: blocks whose colours the decoder clipped are no evidence of a single compression', async () => {
  const dir = await tempDir();
  // Highlights clipped over the right half, saved at quality 60, then again at 90 (a downloaded
  // photo saved by an editor). Its clipped blocks left the quantiser lattice and the map marked
  // them as compressed once: peak 0.95, a third of the right half's mean.
  const width = 640, height = 480;
  const rgb = cameraLikeRgb(width, height, 3);
  for (let y = 0; y < height; y++) for (let p = (y * width + width / 2) * 3; p < (y + 1) * width * 3; p++) rgb[p] = Math.min(255, rgb[p]! * 3);
  const first = await sharp(rgb, { raw: { width, height, channels: 3 } }).jpeg({ quality: 60 }).toBuffer();
  const path = join(dir, 'saved-twice.jpg');
  await writeFile(path, await sharp(first).jpeg({ quality: 90 }).toBuffer());
  const analysis = await analyzeImageForgery(path, signal);
  const evidence = analysis.signals.find((s) => s.id === 'double-jpeg')!.evidence as { doubleCompressed: boolean; clippedBlocks: number; peak: number };
  assert.equal(evidence.doubleCompressed, true, JSON.stringify(evidence));
  assert.ok(evidence.clippedBlocks > 0.4, JSON.stringify(evidence));
  const { inside } = mapAgainstBox(analysis.maps.byMethod['double-jpeg']!, analysis.maps.cols, analysis.maps.cell, { x: width / 2, y: 0, w: width / 2, h: height });
  assert.ok(inside < 0.05 && evidence.peak < 0.5, `clipped half's mean ${inside}, peak ${evidence.peak}`);
});

test('noise-level: where most windows read one noise level, the others are not all outliers, and a real difference still is', () => {
  // After a compression that erased the noise, most windows estimate the same level; their median
  // absolute deviation is 0, so every other window used to read as an outlier (peak 1 on
  // untouched photos saved twice). The spread's floor keeps texture's small differences (0.3
  // nats) quiet while a region noisier by about 2 nats (sigma 0 against 2 grey levels) still stands out.
  const deviations = Float32Array.from({ length: 1000 }, (_, i) => (i < 600 ? 0 : i < 990 ? 0.3 : 2));
  const withoutFloor = robustOutlierMap(deviations, 6);
  assert.ok(withoutFloor.values[700]! > 0.99, `without a floor a 0.3-nat window reads ${withoutFloor.values[700]}`);
  const withFloor = robustOutlierMap(deviations, 6, NOISE_MIN_SPREAD);
  assert.ok(withFloor.values[700]! < 0.1, `0.3-nat window reads ${withFloor.values[700]}`);
  assert.ok(withFloor.values[995]! > 0.9, `2-nat window reads ${withFloor.values[995]}`);
});

test('the detector returns the verdict envelope, regions and a heatmap artifact; malformed input is a MediaError', async () => {
  const dir = await tempDir();
  const base = naturalRgb(W, H, 21);
  const path = await writeJpeg(dir, 'copy-move.jpg', copyBlock(base, W, base, W, 30, 40, 250, 190, 80, 80), W, H, 92);
  await detector.load();
  const output = await detector.analyze(detectorInput(path, 'image-forgery-detection', dir), signal);
  const result = output.result as ForgeryResult;
  assert.equal(typeof result.isForged, 'boolean');
  assert.ok(result.score >= 0 && result.score <= 1 && result.confidence >= 0 && result.confidence <= 1);
  assert.ok(Array.isArray(result.regions) && result.regions.length > 0);
  assert.equal(output.artifacts?.[0]?.kind, 'heatmap');
  assert.equal(output.artifacts?.[0]?.contentType, 'image/png');

  const bytes = await readFile(path);
  const truncated = join(dir, 'truncated.jpg');
  await writeFile(truncated, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
  await assert.rejects(detector.analyze(detectorInput(truncated, 'image-forgery-detection', dir), signal), (error: unknown) => error instanceof MediaError);
});

test('a 1x1 image gets an inconclusive answer that says no method could analyse it, not a verdict', async () => {
  const dir = await tempDir();
  const path = join(dir, 'one-pixel.png');
  await sharp(Buffer.from([120, 80, 40]), { raw: { width: 1, height: 1, channels: 3 } }).png().toFile(path);
  await detector.load();
  const result = (await detector.analyze(detectorInput(path, 'image-forgery-detection', dir), signal)).result as ForgeryResult;
  assert.equal(result.verdict, 'inconclusive');
  assert.equal(result.score, 0.5);
  assert.match(result.analysisDetails.decidedBy, /no method could analyse a 1x1 image/);
});

test('a tiny JPEG and a blank image get inconclusive answers that say why, not authentic from methods that measured nothing', async () => {
  const dir = await tempDir();
  await detector.load();
  /** Why the method `id` stepped aside, as its signal's evidence says. */
  const skippedOf = (result: ForgeryResult, id: string) => String(((result.analysisDetails as unknown as { signals: Signal[] }).signals.find((s) => s.id === id)!.evidence as MethodEvidence).skipped);
  // 16x16 JPEG: 4 whole 8x8 blocks, too few for ELA, ghosts or double-JPEG to compare blocks with each other.
  const tiny = join(dir, 'tiny.jpg');
  await sharp(naturalRgb(16, 16, 5), { raw: { width: 16, height: 16, channels: 3 } }).jpeg({ quality: 85 }).toFile(tiny);
  const small = (await detector.analyze(detectorInput(tiny, 'image-forgery-detection', dir), signal)).result as ForgeryResult;
  assert.equal(small.verdict, 'inconclusive');
  assert.equal(small.score, 0.5);
  assert.match(small.analysisDetails.decidedBy, /no method could analyse a 16x16 image/);
  assert.match(skippedOf(small, 'ela'), /4 whole 8x8 blocks/);
  // A single-colour 640x480 image, as PNG and as JPEG: every method finds a flat image and says so.
  for (const format of ['png', 'jpeg'] as const) {
    const blank = join(dir, `blank.${format === 'png' ? 'png' : 'jpg'}`);
    const image = sharp({ create: { width: 640, height: 480, channels: 3, background: '#3060a0' } });
    await (format === 'png' ? image.png() : image.jpeg({ quality: 90 })).toFile(blank);
    const result = (await detector.analyze(detectorInput(blank, 'image-forgery-detection', dir), signal)).result as ForgeryResult;
    assert.equal(result.verdict, 'inconclusive', format);
    assert.equal(result.score, 0.5, format);
    assert.match(skippedOf(result, 'copy-move'), /no textured pixel/, format);
    assert.match(skippedOf(result, 'noise-level'), /flat/, format);
    if (format === 'jpeg') for (const id of ['ela', 'jpeg-ghost']) assert.match(skippedOf(result, id), /flat/, `${format} ${id}`);
  }
});

test('a phone photo with an EXIF orientation: its heatmap lies on the stored pixels and the result says how to turn it; uprightBox turns a box as decoders do', async () => {
  // A white box on black, stored 96x64, under each of the eight EXIF orientations: where sharp's
  // auto-orientation puts the box is where uprightBox says it goes.
  const width = 96, height = 64, box = { x: 10, y: 6, width: 30, height: 12 };
  const stored = Buffer.alloc(width * height * 3);
  for (let y = box.y; y < box.y + box.height; y++) stored.fill(255, (y * width + box.x) * 3, (y * width + box.x + box.width) * 3);
  for (let orientation = 1; orientation <= 8; orientation++) {
    const file = await sharp(stored, { raw: { width, height, channels: 3 } }).png().withMetadata({ orientation }).toBuffer();
    const { data, info } = await sharp(file).rotate().greyscale().raw().toBuffer({ resolveWithObject: true });
    let x0 = Infinity, y0 = Infinity, x1 = -1, y1 = -1;
    for (let y = 0; y < info.height; y++) for (let x = 0; x < info.width; x++) if (data[y * info.width + x]! > 127) { x0 = Math.min(x0, x); y0 = Math.min(y0, y); x1 = Math.max(x1, x); y1 = Math.max(y1, y); }
    assert.deepEqual(uprightBox(box, orientation, width, height), { x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 }, `orientation ${orientation}`);
  }
  // Through the detector: a 320x240 photo stored sideways (orientation 6, shown 240x320).
  const dir = await tempDir();
  const path = join(dir, 'phone.jpg');
  await sharp(naturalRgb(320, 240, 9), { raw: { width: 320, height: 240, channels: 3 } }).jpeg({ quality: 90 }).withMetadata({ orientation: 6 }).toFile(path);
  await detector.load();
  const output = await detector.analyze(detectorInput(path, 'image-forgery-detection', dir), signal);
  const details = (output.result as ForgeryResult).analysisDetails as unknown as { image: { width: number; height: number; orientation: number } };
  assert.deepEqual([details.image.width, details.image.height, details.image.orientation], [320, 240, 6]);
  const heatmap = await sharp(Buffer.from(output.artifacts![0]!.data)).metadata();
  assert.deepEqual([heatmap.width, heatmap.height], [320, 240], 'the heatmap is on the stored pixels, like the regions');
});

/** A camera-sized photo (1.2 MP, camera noise, saved once at 95) and the decoded pixels of it. */
async function cameraPhoto(seed: number) {
  const width = 1280, height = 960;
  return { width, height, pixels: await jpegLife(cameraLikeRgb(width, height, seed), width, height, 95) };
}

/** The index (y·width + x) of every pixel inside the circle of `radius` around `centre`. */
function* pixelsInCircle(width: number, centre: { x: number; y: number }, radius: number) {
  for (let y = centre.y - radius; y < centre.y + radius; y++) {
    for (let x = centre.x - radius; x < centre.x + radius; x++) if ((x - centre.x) ** 2 + (y - centre.y) ** 2 <= radius * radius) yield y * width + x;
  }
}

/** The pixels inside a circle replaced by a strongly blurred copy: smooth like an inpainted fill, as bright and as shaded as before. */
async function smoothFill(pixels: Buffer, width: number, height: number, centre: { x: number; y: number }, radius: number) {
  const blurred = await sharp(pixels, { raw: { width, height, channels: 3 } }).blur(6).raw().toBuffer();
  const filled = Buffer.from(pixels);
  for (const i of pixelsInCircle(width, centre, radius)) for (let c = 0; c < 3; c++) filled[i * 3 + c] = blurred[i * 3 + c]!;
  return filled;
}

test('an area filled smoothly in a full-size camera JPEG is found by the missing camera noise, mapped where it was filled, and decides; the untouched photo is not called forged by it', async () => {
  const dir = await tempDir();
  const { width, height, pixels } = await cameraPhoto(31);
  const centre = { x: 820, y: 400 }, radius = 90;
  const forged = await writeJpeg(dir, 'filled.jpg', await smoothFill(pixels, width, height, centre, radius), width, height, 90);
  const untouched = await writeJpeg(dir, 'resaved.jpg', pixels, width, height, 90);
  await detector.load();
  const missingNoise = (result: ForgeryResult) => result.analysisDetails.signals.find((s) => s.id === 'missing-noise')!;

  const filled = (await detector.analyze(detectorInput(forged, 'image-forgery-detection', dir), signal)).result as ForgeryResult;
  const clean = (await detector.analyze(detectorInput(untouched, 'image-forgery-detection', dir), signal)).result as ForgeryResult;
  // Stop 69's check kept its fifth rule in force (forgery-fusion.json): decisive from its decisive probability.
  assert.equal(fusion.missingNoise.decides, true);
  assert.ok(missingNoise(filled).score! >= fusion.missingNoise.decisiveProbability, `filled area's probability ${missingNoise(filled).score}`);
  assert.equal(missingNoise(filled).weight, 1);
  assert.equal(filled.verdict, 'manipulated');
  assert.match(filled.analysisDetails.decidedBy, /missing camera noise/);
  assert.ok(filled.regions.some((r) => r.methods.includes('missing-noise') && r.x < centre.x && r.x + r.width > centre.x && r.y < centre.y && r.y + r.height > centre.y), `regions ${JSON.stringify(filled.regions)}`);
  assert.ok(missingNoise(clean).score! < 0.6, `untouched photo's probability ${missingNoise(clean).score}`);
  assert.equal(missingNoise(clean).weight, 0);
  assert.notEqual(clean.verdict, 'manipulated');
  assert.doesNotMatch(clean.analysisDetails.decidedBy, /missing camera noise/);
  // It says where to look: the smoothest region's box holds the fill's centre; the clean photo has none.
  const region = (missingNoise(filled).evidence as { smoothestRegion: { x: number; y: number; width: number; height: number } | null }).smoothestRegion!;
  assert.ok(region.x < centre.x && region.x + region.width > centre.x && region.y < centre.y && region.y + region.height > centre.y, `region ${JSON.stringify(region)}`);
  assert.ok(region.width <= 4 * radius && region.height <= 4 * radius, `region ${JSON.stringify(region)} is about the fill's size`);
  assert.equal((missingNoise(clean).evidence as { smoothestRegion: unknown }).smoothestRegion, null);
  // Its map marks the fill: the blocks inside the fill's square read high, the rest low.
  const analysis = await analyzeImageForgery(forged, signal, { cameraNoise: true });
  const { cols, cell, byMethod } = analysis.maps;
  const fit = mapAgainstBox(byMethod['missing-noise']!, cols, cell, { x: centre.x - radius / 2, y: centre.y - radius / 2, w: radius, h: radius });
  assert.ok(fit.inside >= 0.6 && fit.outside < 0.1, `inside ${fit.inside}, outside ${fit.outside}`);
});

test('a smooth region of saturated colour (a yellow wall: red clipped high, blue low, mid-tone luma) is left out by the missing camera noise, not taken for a fill', async () => {
  const dir = await tempDir();
  const { width, height, pixels } = await cameraPhoto(31);
  const centre = { x: 820, y: 400 }, radius = 90;
  const smooth = await smoothFill(pixels, width, height, centre, radius);
  // The same smooth circle as the fill above, its red and blue channels saturated: clipping, not a fill, took the noise away.
  for (const i of pixelsInCircle(width, centre, radius)) {
    smooth[i * 3] = 255;
    smooth[i * 3 + 2] = 0;
  }
  const wall = await writeJpeg(dir, 'yellow-wall.jpg', smooth, width, height, 95);
  await detector.load();
  const result = (await detector.analyze(detectorInput(wall, 'image-forgery-detection', dir), signal)).result as ForgeryResult;
  const missingNoise = result.analysisDetails.signals.find((s) => s.id === 'missing-noise')!;
  assert.ok(missingNoise.score! < 0.5, `saturated region's probability ${missingNoise.score}`);
  assert.equal((missingNoise.evidence as { smoothestRegion: unknown }).smoothestRegion, null);
});

test('a decisive filled region raises the model-free score only while its rule is in force', () => {
  assert.equal(fillDecides(0.9, { decides: true, decisiveProbability: 0.82 }), true);
  assert.equal(fillDecides(0.8, { decides: true, decisiveProbability: 0.82 }), false);
  assert.equal(fillDecides(0.55, { decides: true, decisiveProbability: 0.5 }), false);
  assert.equal(fillDecides(0.99, { decides: false, decisiveProbability: 0.82 }), false);
  assert.equal(withFilledRegion(0.2, { probability: 0.9, decides: true }), 0.9);
  assert.equal(withFilledRegion(0.7, { probability: 0.65, decides: true }), 0.7);
  assert.equal(withFilledRegion(0.2, { probability: 0.9, decides: false }), 0.2);
  assert.equal(withFilledRegion(0.2, null), 0.2);
});

test('missing camera noise runs only where a camera photo can be: a small JPEG, a PNG and a document scan say why it did not', async () => {
  const dir = await tempDir();
  const { width, height, pixels } = await cameraPhoto(32);
  const png = await writePng(dir, 'photo.png', pixels, width, height);
  const small = await writeJpeg(dir, 'small.jpg', naturalRgb(W, H, 33), W, H, 90);
  await detector.load();
  const skippedBecause = async (path: string) => {
    const result = (await detector.analyze(detectorInput(path, 'image-forgery-detection', dir), signal)).result as ForgeryResult;
    return (result.analysisDetails.signals.find((s) => s.id === 'missing-noise')!.evidence as MethodEvidence).skipped;
  };
  assert.match((await skippedBecause(png))!, /a PNG/);
  assert.match((await skippedBecause(small))!, /under 1\.0 MP/);
  // Document scans call the analysis without it: a scanner's flat paper is no camera's noise.
  const scan = await analyzeImageForgery(await writeJpeg(dir, 'scan.jpg', pixels, width, height, 90), signal);
  assert.equal(scan.signals.some((s) => s.id === 'missing-noise'), false);
});

test('a 16-megapixel camera frame (4640x3480, 16.1 MP) is analysed whole: the compression methods and the missing camera noise run at full resolution', async () => {
  const dir = await tempDir();
  const width = 4640, height = 3480;
  // Scaled-up camera-like pixels: the test needs the frame's size, not a fine texture.
  const small = cameraLikeRgb(1160, 870, 34);
  const pixels = await sharp(small, { raw: { width: 1160, height: 870, channels: 3 } }).resize(width, height).raw().toBuffer();
  const path = await writeJpeg(dir, 'sixteen.jpg', pixels, width, height, 92);
  const analysis = await analyzeImageForgery(path, signal, { cameraNoise: true });
  for (const id of ['ela', 'jpeg-ghost', 'double-jpeg', 'missing-noise'] as const) {
    const method = analysis.signals.find((s) => s.id === id)!;
    assert.doesNotMatch(String((method.evidence as MethodEvidence).skipped ?? ''), /pixels/, `${id} ran: ${JSON.stringify(method.evidence)}`);
  }
});

test('a JPEG over 0.6 MP is scored with the weights fitted on full-size and saved-twice photos; a smaller image or a PNG keeps the synthetic-fitted ones', async () => {
  const large = fusion.large;
  assert.ok(large && large.minPixels === GEOMETRY_MAX_PIXELS, 'forgery-fusion.json holds the large-image weights');
  assert.equal(imageWeights('jpeg', GEOMETRY_MAX_PIXELS).bias, fusion.bias);
  assert.equal(imageWeights('jpeg', GEOMETRY_MAX_PIXELS + 1).bias, large.bias);
  // The large weights were fitted on JPEGs: a large PNG keeps the weights its grid map was fitted with.
  assert.equal(imageWeights('png', 12e6).bias, fusion.bias);
  // The same evidence (a double-JPEG mismatch and nothing else) is weighed by each regime's own fit.
  const methods: MethodResult[] = [{ id: 'double-jpeg', label: 'Double JPEG', peak: 1, area: 0.05, map: { values: new Float32Array(1), cols: 1, rows: 1 }, evidence: {} }];
  const expected = (w: { bias: number; weights: Record<string, { peak: number; area: number }> }) => 1 / (1 + Math.exp(-(w.bias + w.weights['double-jpeg']!.peak + 0.05 * w.weights['double-jpeg']!.area)));
  assert.ok(Math.abs(fuseScore(methods, imageWeights('jpeg', 12e6)) - expected(large)) < 1e-9);
  assert.ok(Math.abs(fuseScore(methods, imageWeights('jpeg', 400_000)) - expected(fusion)) < 1e-9);
  // Through the analysis: a 1200x900 JPEG's signals report the large-image weights, a 768x576 one the others.
  const dir = await tempDir();
  for (const [width, height, weights] of [[1200, 900, large.weights], [768, 576, fusion.weights]] as const) {
    const path = await writeJpeg(dir, `${width}.jpg`, cameraLikeRgb(width, height, 5), width, height, 90);
    const analysis = await analyzeImageForgery(path, signal);
    const ghost = analysis.signals.find((s) => s.id === 'jpeg-ghost')!;
    assert.equal(ghost.weight, Math.abs(weights['jpeg-ghost'].peak), `${width}x${height}: ${JSON.stringify(ghost)}`);
  }
});

test('a PNG is decoded once: its scaled copies, resized from the decoded pixels, are byte for byte those of decoding it again', async () => {
  const { decodePixels, loadImage } = await import('../../src/detectors/image/image-input.js');
  const dir = await tempDir();
  const width = 1300, height = 900; // over every analysis size, so every copy is scaled
  const path = await writePng(dir, 'photo.png', await jpegLife(cameraLikeRgb(width, height, 7), width, height, 85), width, height);
  const reused = await loadImage(path);
  assert.equal(reused.plainRgbPng, true);
  await decodePixels(reused, { channels: 3 }); // the whole decode the forgery methods make first
  for (const [channels, maxPixels] of [[1, GEOMETRY_MAX_PIXELS], [1, 240_000], [3, 1_000_000], [3, 300_000]] as const) {
    const fresh = await decodePixels(await loadImage(path), { channels, maxPixels });
    const fromPixels = await decodePixels(reused, { channels, maxPixels });
    assert.deepEqual([fromPixels.width, fromPixels.height, fromPixels.channels], [fresh.width, fresh.height, fresh.channels]);
    assert.ok(fresh.scale < 1 && fromPixels.data.equals(fresh.data), `${channels} channel(s) at ${maxPixels} pixels`);
  }
  // A PNG with an alpha channel is not plain RGB: it is decoded per copy, as before.
  const rgba = await sharp(path).ensureAlpha().png().toFile(join(dir, 'alpha.png'));
  assert.ok(rgba.channels === 4);
  assert.equal((await loadImage(join(dir, 'alpha.png'))).plainRgbPng, false);
});
