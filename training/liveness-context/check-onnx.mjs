// Loads server/models/face-liveness-context.onnx in onnxruntime-node (one thread), compares it with
// PyTorch on the probes and 64 validation crops export.py wrote, and measures crops per second.
// Run from the repository root: taskset -c 0 node training/liveness-context/check-onnx.mjs
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const require = createRequire(new URL('../../server/package.json', import.meta.url));
const ort = require('onnxruntime-node');
const W = process.env.WORK ?? '/work/data/pad2';
const M = process.env.MODEL_DIR ?? 'server/models';
const desc = JSON.parse(readFileSync(`${M}/face-liveness-context.json`, 'utf8'));
const session = await ort.InferenceSession.create(`${M}/face-liveness-context.onnx`, { intraOpNumThreads: 1, interOpNumThreads: 1 });
const f32 = (p) => { const b = readFileSync(p); return new Float32Array(b.buffer, b.byteOffset, b.length / 4); };
const side = 112, plane = side * side;
const run = async (data, n) => (await session.run({ crop: new ort.Tensor('float32', data, [n, 1, side, side]) })).logit.data;
// probes rebuilt in JS exactly as the descriptor describes them
const grey = new Float32Array(plane).fill(128 / 255);
const noise = new Float32Array(plane); let x = 12345;
for (let i = 0; i < plane; i++) { x = (Math.imul(x, 1664525) + 1013904223) >>> 0; noise[i] = (x >>> 24) / 255; }
const frame = new Float32Array(plane);
for (let r = 0; r < side; r++) for (let c = 0; c < side; c++) {
  const outer = r >= 16 && r < 96 && c >= 16 && c < 96, inner = r >= 24 && r < 88 && c >= 24 && c < 88;
  frame[r * side + c] = outer && !inner ? 0.08 : (c + r) / 222;
}
const rec = desc.training.recordedLogits;
const got = [];
for (const p of [grey, noise, frame]) got.push((await run(p, 1))[0]);
const pyProbes = f32(`${W}/probes.f32`);
let maxProbeInput = 0; [grey, noise, frame].forEach((p, k) => p.forEach((v, i) => { maxProbeInput = Math.max(maxProbeInput, Math.abs(v - pyProbes[k * plane + i])); }));
console.log('probe inputs JS vs Python max |diff|', maxProbeInput);
console.log('recorded', [rec.grey, rec.noise, rec.frame], 'onnx (JS-built probes)', got.map((v) => +v.toFixed(5)));
const vx = f32(`${W}/valcrops.f32`), vref = f32(`${W}/valcrops-torch.f32`);
const vo = await run(vx, vref.length);
let md = 0; for (let i = 0; i < vref.length; i++) md = Math.max(md, Math.abs(vo[i] - vref[i]));
console.log('64 validation crops: max |onnx - torch| logit', md);
let n = 0; const t = Date.now();
while (Date.now() - t < 5000) { await run(vx.subarray(0, plane), 1); n++; }
console.log('onnxruntime-node one thread, batch 1:', (n / ((Date.now() - t) / 1000)).toFixed(1), 'crops/s');
