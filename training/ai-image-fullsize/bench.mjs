// Parity and speed of the candidate ONNX in onnxruntime-node (one thread), as the server would run it.
// node training/ai-image-fullsize/bench.mjs /work/data/ai-fullsize/candidate/ai-image-fullsize.json <12 MP JPEG> [runs]
// Checks the recorded outputs on the generated tiles (generated-tiles.npy beside the model), then
// times decode (sharp, stored orientation) + tile grid + inference on the JPEG.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
const require = createRequire(path.resolve('/work/main/package.json'));
const ort = require('onnxruntime-node');
const sharp = require('sharp');

const [descPath, jpegPath, runsArg] = process.argv.slice(2);
const desc = JSON.parse(fs.readFileSync(descPath, 'utf8'));
const dir = path.dirname(descPath);
const P = desc.input.tile, G = desc.input.gridMax;
const session = await ort.InferenceSession.create(path.join(dir, desc.model), { intraOpNumThreads: 1, interOpNumThreads: 1 });

function readNpy(file) {
  const buf = fs.readFileSync(file);
  const hlen = buf.readUInt16LE(8);
  const header = buf.subarray(10, 10 + hlen).toString();
  const shape = header.match(/\((.*?)\)/)[1].split(',').filter((s) => s.trim()).map(Number);
  const data = new Float32Array(buf.buffer.slice(buf.byteOffset + 10 + hlen, buf.byteOffset + buf.length));
  return { shape, data };
}
const gen = readNpy(path.join(dir, 'generated-tiles.npy'));
const out = await session.run({ patches: new ort.Tensor('float32', gen.data, gen.shape) });
const got = Array.from(out.logits.data);
const want = desc.training.recordedOutputs.logits;
console.log('parity', got.map((v) => v.toFixed(6)), 'recorded', want, 'max |diff|', Math.max(...got.map((v, i) => Math.abs(v - want[i]))));

function boxes(w, h) {
  if (w < P || h < P) return [];
  const nx = Math.min(G, Math.floor(w / P)), ny = Math.min(G, Math.floor(h / P));
  const xs = nx === 1 ? [0] : Array.from({ length: nx }, (_, i) => Math.round((i * (w - P)) / (nx - 1)));
  const ys = ny === 1 ? [0] : Array.from({ length: ny }, (_, j) => Math.round((j * (h - P)) / (ny - 1)));
  return ys.flatMap((y) => xs.map((x) => [x, y]));
}

async function scoreFile(file) {
  const t0 = performance.now();
  const { data, info } = await sharp(file, { limitInputPixels: false }).removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  const t1 = performance.now();
  const { width: w, height: h, channels: c } = info;
  const bx = boxes(w, h);
  const plane = P * P;
  const t = new Float32Array(bx.length * 3 * plane);
  bx.forEach(([x0, y0], n) => {
    for (let y = 0; y < P; y++) for (let x = 0; x < P; x++) {
      const src = ((y0 + y) * w + (x0 + x)) * c;
      for (let k = 0; k < 3; k++) t[n * 3 * plane + k * plane + y * P + x] = data[src + (c >= 3 ? k : 0)] / 255;
    }
  });
  const r = await session.run({ patches: new ort.Tensor('float32', t, [bx.length, 3, P, P]) });
  const logits = Array.from(r.logits.data);
  const t2 = performance.now();
  const mean = logits.reduce((a, b) => a + b, 0) / logits.length;
  const p = 1 / (1 + Math.exp(-(desc.calibration.a * mean + desc.calibration.b)));
  return { w, h, tiles: bx.length, decodeMs: t1 - t0, modelMs: t2 - t1, logit: mean, p };
}

if (jpegPath) {
  const runs = Number(runsArg ?? 3);
  for (let i = 0; i < runs; i++) console.log(JSON.stringify(await scoreFile(jpegPath)));
}
