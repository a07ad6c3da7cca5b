import { join, resolve } from 'node:path';
import { decodePixels, loadImage } from '../src/detectors/image/image-input.js';
import { copyMoveDetection } from './copy-move-x.ts';
import { readLabels } from '../src/eval/main.js';
const dir = resolve(process.argv[2]!);
const sizes = process.argv[3]!.split(',').map(Number);
const only = process.argv[4] ?? '';
const KINDS = ['splice', 'copy-move', 'removal'];
for (const { file, label } of await readLabels(dir)) {
  if (only && !new RegExp(only).test(file)) continue;
  const m = /^f(\d+)\./.exec(file); const kind = m ? KINDS[Number(m[1]) % 3] : 'untouched';
  const image = await loadImage(join(dir, file));
  const out: any[] = [];
  for (const px of sizes) {
    const t = performance.now();
    const small = await decodePixels(image, { channels: 1, maxPixels: px });
    const r = copyMoveDetection(new Float32Array(small.data), small.width, small.height, new AbortController().signal, {});
    out.push({ px, peak: +r.peak.toFixed(2), area: +r.area.toFixed(4), shifts: (r.evidence.shiftVectors as any[] ?? []).length, ms: Math.round(performance.now() - t) });
  }
  console.log(JSON.stringify({ file, label, kind, out }));
}
