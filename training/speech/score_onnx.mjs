// Scores an ONNX speech model (e.g. the shipped server/models/speech-antispoof.onnx, or a candidate) with
// onnxruntime-node, the service's runtime, on the exact windows export.py wrote (eval_windows.f32 / .json).
// Writes {clip index: mean window logit}. Usage: node training/speech/score_onnx.mjs <model.onnx> <data dir> <out.json> [eval_windows|eval_windows2]
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const require = createRequire(new URL('../../server/package.json', import.meta.url));
const ort = require('onnxruntime-node');
const [model, dir, out, prefix = 'eval_windows'] = process.argv.slice(2);
const index = JSON.parse(readFileSync(`${dir}/${prefix}.json`, 'utf8'));
const buf = readFileSync(`${dir}/${prefix}.f32`);
const all = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1, interOpNumThreads: 1 });
const input = session.inputNames[0], output = session.outputNames[0];
const W = index.win, scores = {};
for (const [clip, start, count] of index.clips) {
  const data = all.slice(start * W, (start + count) * W);
  const res = await session.run({ [input]: new ort.Tensor('float32', data, [count, W]) });
  const logits = res[output].data;
  let s = 0; for (const v of logits) s += v;
  scores[clip] = s / logits.length;
}
writeFileSync(out, JSON.stringify(scores));
console.log('scored', Object.keys(scores).length, 'clips with', model);
