// v16 (stop 77): runs moonshine.py's taps graph (the frozen Moonshine encoder with every tap's pooled statistics as outputs)
// with onnxruntime-node on the windows of a windows file, in its rows' order, and writes D/moonshine/<prefix>.f32:
// per window, the taps' [mean, standard deviation] (8 × 576 float32); with frames.onnx (stop 77's probe) each tap's frames
// (8 × 288 × T float32) to frames-<prefix>.f32. Shards split the rows for parallel processes.
// Usage: node training/speech/moonshine_taps.mjs <taps.onnx> <data dir> <train_windows|val_windows> [shard shards]
//   then: cat D/moonshine/[frames-]<prefix>.{0..n-1}of<n>.f32 > D/moonshine/[frames-]<prefix>.f32
import { openSync, readSync, writeFileSync, readFileSync, closeSync, appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename } from 'node:path';
const require = createRequire(new URL('../../server/package.json', import.meta.url));
const ort = require('onnxruntime-node');
const [model, dir, prefix, shard = '0', shards = '1'] = process.argv.slice(2);
const index = JSON.parse(readFileSync(`${dir}/${prefix}.json`, 'utf8'));
const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1, interOpNumThreads: 1 });
const W = index.win, fd = openSync(`${dir}/${prefix}.f32`, 'r');
const per = Math.ceil(index.clips.length / Number(shards));  // contiguous shards: `cat` them in order
const rows = index.clips.slice(Number(shard) * per, (Number(shard) + 1) * per);
// taps.onnx writes <prefix>.…f32; another graph (frames.onnx) <its name>-<prefix>.…f32
const tag = basename(model, '.onnx') === 'taps' ? '' : `${basename(model, '.onnx')}-`;
const out = `${dir}/moonshine/${tag}${prefix}.${shard}of${shards}.f32`;
writeFileSync(out, Buffer.alloc(0));
const t0 = Date.now(); let done = 0;
for (const [, start, count] of rows) {
  const bytes = Buffer.alloc(count * W * 4);
  readSync(fd, bytes, 0, bytes.length, start * W * 4);
  const res = await session.run({ [session.inputNames[0]]: new ort.Tensor('float32', new Float32Array(bytes.buffer, bytes.byteOffset, count * W), [count, W]) });
  const taps = session.outputNames.map((name) => res[name].data);
  const width = taps[0].length / count;
  const perRow = new Float32Array(count * taps.length * width);
  for (let w = 0; w < count; w++) taps.forEach((t, k) => perRow.set(t.subarray(w * width, (w + 1) * width), (w * taps.length + k) * width));
  appendFileSync(out, Buffer.from(perRow.buffer));
  if (++done % 500 === 0) console.log(prefix, shard, done, 'of', rows.length, 'rows', ((Date.now() - t0) / done).toFixed(0), 'ms a row');
}
closeSync(fd);
console.log('wrote', out, rows.length, 'rows in', ((Date.now() - t0) / 1000).toFixed(0), 's');
