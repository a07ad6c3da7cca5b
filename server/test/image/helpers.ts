/**
 * Test media built in the tests themselves: PNG text chunks, stealth PNG info, the
 * invisible-watermark dwtDct embedder (the inverse of the decoder under test), textured
 * "photo-like" rasters.
 */
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32, deflateSync, gzipSync } from 'node:zlib';
import sharp, { type JpegOptions } from 'sharp';
import { carrierIndex, haarLL, WATERMARK_SCALE } from '../../src/detectors/image/sd-watermark.js';
import type { DetectorInput } from '../../src/detectors/types.js';
import { loadModel, type LoadedModel } from '../../src/detectors/model-pack.js';
import { seededRandom } from '../../src/detectors/signal/seeded-random.js';
import { assertShippedWeights } from '../model-files.js';

/** Deterministic pseudo-random numbers, so test images are reproducible. */
export const random = seededRandom;

export async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'mediaproof-image-test-'));
}


/** A smooth, textured RGB scene with mild sensor-like noise, mid-tones so nothing clips. */
export function texturedRgb(width: number, height: number, seed = 1): Buffer {
  const rand = random(seed);
  const data = Buffer.alloc(width * height * 3);
  const phase = rand() * 6;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const base = 120 + 40 * Math.sin(x / 23 + phase) * Math.cos(y / 31) + 20 * Math.sin((x + y) / 7);
      const p = (y * width + x) * 3;
      data[p] = Math.max(30, Math.min(225, Math.round(base + 15 + (rand() - 0.5) * 12)));
      data[p + 1] = Math.max(30, Math.min(225, Math.round(base + (rand() - 0.5) * 12)));
      data[p + 2] = Math.max(30, Math.min(225, Math.round(base - 15 + 20 * Math.cos(y / 17) + (rand() - 0.5) * 12)));
    }
  }
  return data;
}

export function pngChunk(type: string, payload: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(payload.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), payload]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body) >>> 0);
  return Buffer.concat([length, body, crc]);
}

/** Inserts tEXt chunks right after IHDR of a PNG. */
export function withPngText(png: Buffer, entries: Record<string, string>): Buffer {
  const ihdrEnd = 8 + 8 + png.readUInt32BE(8) + 4;
  const texts = Object.entries(entries).map(([key, value]) => pngChunk('tEXt', Buffer.concat([Buffer.from(key, 'latin1'), Buffer.from([0]), Buffer.from(value, 'latin1')])));
  return Buffer.concat([png.subarray(0, ihdrEnd), ...texts, png.subarray(ihdrEnd)]);
}

/** Hides text in the alpha LSBs, column-major, as the stealth PNG info extension does (gzip variant). */
export function embedStealthPngInfo(rgba: Buffer, width: number, height: number, text: string): Buffer {
  const payload = gzipSync(Buffer.from(text, 'utf8'));
  const length = Buffer.alloc(4);
  length.writeUInt32BE(payload.length * 8);
  const stream = Buffer.concat([Buffer.from('stealth_pngcomp', 'latin1'), length, payload]);
  const out = Buffer.from(rgba);
  let k = 0;
  for (let x = 0; x < width && k < stream.length * 8; x++) {
    for (let y = 0; y < height && k < stream.length * 8; y++, k++) {
      const bit = (stream[k >> 3]! >> (7 - (k & 7))) & 1;
      const p = (y * width + x) * 4 + 3;
      out[p] = (out[p]! & 0xfe) | bit;
    }
  }
  return out;
}

/**
 * The invisible-watermark library's dwtDct embedding, re-implemented for tests: U channel,
 * Haar DWT, in each 4x4 LL block move the largest-magnitude value (after the first) to the
 * quarter (bit 0) or three-quarter (bit 1) point of its 36-wide quantisation cell.
 */
export function embedDwtWatermark(rgb: Buffer, width: number, height: number, bits: readonly number[]): Buffer {
  const w = width - (width % 4), h = height - (height % 4);
  const y = new Float64Array(width * height), u = new Float32Array(w * h), v = new Float64Array(width * height);
  for (let i = 0; i < width * height; i++) {
    const r = rgb[i * 3]!, g = rgb[i * 3 + 1]!, b = rgb[i * 3 + 2]!;
    y[i] = 0.299 * r + 0.587 * g + 0.114 * b;
    v[i] = 0.877 * (r - y[i]!) + 128;
  }
  for (let row = 0; row < h; row++) {
    for (let col = 0; col < w; col++) {
      const i = row * width + col;
      u[row * w + col] = Math.round(0.492 * (rgb[i * 3 + 2]! - y[i]!) + 128);
    }
  }
  const band = haarLL(u, w, h);
  const blocksX = band.width / 4, blocksY = band.height / 4;
  let n = 0;
  for (let by = 0; by < blocksY; by++) {
    for (let bx = 0; bx < blocksX; bx++, n++) {
      const index = carrierIndex(band.ll, band.width, bx, by);
      const value = band.ll[index]!;
      const bit = bits[n % bits.length]!;
      const magnitude = (Math.floor(Math.abs(value) / WATERMARK_SCALE) + 0.25 + 0.5 * bit) * WATERMARK_SCALE;
      const delta = (value >= 0 ? magnitude : -magnitude) - value;
      // Changing LL by delta while keeping the detail bands changes each of the 2x2 pixels by delta / 2.
      const llX = index % band.width, llY = Math.floor(index / band.width);
      for (const [dx, dy] of [[0, 0], [1, 0], [0, 1], [1, 1]] as const) u[(2 * llY + dy) * w + 2 * llX + dx]! += delta / 2;
    }
  }
  const out = Buffer.from(rgb);
  for (let row = 0; row < h; row++) {
    for (let col = 0; col < w; col++) {
      const i = row * width + col;
      const uu = u[row * w + col]! - 128, vv = v[i]! - 128, yy = y[i]!;
      const clamp = (x: number) => Math.max(0, Math.min(255, Math.round(x)));
      out[i * 3] = clamp(yy + 1.14 * vv);
      out[i * 3 + 1] = clamp(yy - 0.395 * uu - 0.581 * vv);
      out[i * 3 + 2] = clamp(yy + 2.032 * uu);
    }
  }
  return out;
}

export async function writePng(dir: string, name: string, raw: Buffer, width: number, height: number, channels: 3 | 4 = 3): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, await sharp(raw, { raw: { width, height, channels } }).png().toBuffer());
  return path;
}

export async function writeJpeg(dir: string, name: string, raw: Buffer, width: number, height: number, quality = 90): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, await sharp(raw, { raw: { width, height, channels: 3 } }).jpeg({ quality }).toBuffer());
  return path;
}

export function detectorInput(path: string, slug: string, workDir: string, modelsDir: string | null = null): DetectorInput {
  return {
    jobId: 'test',
    taskTypeSlug: slug,
    files: [{ slotName: 'original', contentType: 'image/png', fileName: 'x', sizeBytes: 0, path }],
    parameters: {},
    workDir,
    modelsDir,
  };
}

/** Non-periodic "natural" texture: octaves of smoothed value noise per channel, plus grain. */
export function naturalRgb(width: number, height: number, seed = 1): Buffer {
  const rand = random(seed);
  const data = Buffer.alloc(width * height * 3);
  const octaves = [32, 12, 5].map((cell) => {
    const gw = Math.ceil(width / cell) + 2, gh = Math.ceil(height / cell) + 2;
    return { cell, gw, grid: Float32Array.from({ length: gw * gh * 3 }, () => rand()) };
  });
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < 3; c++) {
        let value = 0;
        for (const [o, { cell, gw, grid }] of octaves.entries()) {
          const gx = x / cell, gy = y / cell, x0 = Math.floor(gx), y0 = Math.floor(gy), fx = gx - x0, fy = gy - y0;
          const at = (i: number, j: number) => grid[((j * gw) + i) * 3 + c]!;
          const v = at(x0, y0) * (1 - fx) * (1 - fy) + at(x0 + 1, y0) * fx * (1 - fy) + at(x0, y0 + 1) * (1 - fx) * fy + at(x0 + 1, y0 + 1) * fx * fy;
          value += v * [120, 60, 30][o]!;
        }
        data[(y * width + x) * 3 + c] = Math.max(0, Math.min(255, Math.round(value + 20 + (rand() - 0.5) * 6)));
      }
    }
  }
  return data;
}

/** naturalRgb with camera-like pixel noise (±6 levels, drawn from seed + 1): what resampling smooths and JPEG steps quantise. */
export function cameraLikeRgb(width: number, height: number, seed: number): Buffer {
  const noise = random(seed + 1);
  return Buffer.from(naturalRgb(width, height, seed).map((v) => Math.max(0, Math.min(255, v + Math.round((noise() - 0.5) * 12)))));
}

/** The pixels an RGB image decodes to after one JPEG compression: a photo's JPEG life before an edit. */
export async function jpegLife(rgb: Uint8Array, width: number, height: number, quality: number, options: JpegOptions = {}): Promise<Buffer> {
  const jpeg = await sharp(rgb, { raw: { width, height, channels: 3 } }).jpeg({ quality, ...options }).toBuffer();
  return sharp(jpeg).raw().toBuffer();
}

/**
 * A map on a grid of `cell`-pixel cells against a box (a cell belongs to it when its centre
 * does): the IoU of the cells marked (≥ threshold) with the box's, and the map's mean inside
 * and outside the box.
 */
export function mapAgainstBox(map: Float32Array, cols: number, cell: number, box: { x: number; y: number; w: number; h: number }, threshold = 0.5) {
  let both = 0, either = 0, inside = 0, insideCells = 0, outside = 0, outsideCells = 0;
  for (let i = 0; i < map.length; i++) {
    const cx = (i % cols) * cell + cell / 2, cy = Math.floor(i / cols) * cell + cell / 2;
    const truth = cx >= box.x && cx < box.x + box.w && cy >= box.y && cy < box.y + box.h, marked = map[i]! >= threshold;
    if (truth && marked) both++;
    if (truth || marked) either++;
    if (truth) { inside += map[i]!; insideCells++; } else { outside += map[i]!; outsideCells++; }
  }
  return { iou: either ? both / either : 0, inside: inside / insideCells, outside: outside / outsideCells };
}

/** Copies a w x h block of an RGB buffer from (sx, sy) to (tx, ty). */
export function copyBlock(rgb: Buffer, width: number, from: Buffer, fromWidth: number, sx: number, sy: number, tx: number, ty: number, w: number, h: number): Buffer {
  const out = Buffer.from(rgb);
  for (let y = 0; y < h; y++) from.copy(out, ((ty + y) * width + tx) * 3, ((sy + y) * fromWidth + sx) * 3, ((sy + y) * fromWidth + sx + w) * 3);
  return out;
}

/** A PNG whose header declares width x height but whose pixel data is a few bytes (a "pixel bomb"). */
export function oversizedPngHeader(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, pngChunk('IHDR', ihdr), pngChunk('IDAT', deflateSync(Buffer.alloc(64))), pngChunk('IEND', Buffer.alloc(0))]);
}

/** A built-in tensor model, asserted to load from server/models, match its sha256 and stay within 30 MiB. */
export async function loadBuiltInModel(name: string): Promise<LoadedModel> {
  const { model, problems } = await loadModel(name);
  assert.ok(model, `the model did not load: ${JSON.stringify(problems)}`);
  assert.equal(model.origin, 'built-in');
  assert.equal(model.descriptor.input.kind, 'tensor');
  const bytes = await assertShippedWeights(model);
  assert.ok(bytes < 30 * 1024 * 1024);
  return model;
}
