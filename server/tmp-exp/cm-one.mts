import { decodePixels, loadImage } from '../src/detectors/image/image-input.js';
import { copyMoveDetection } from '../src/detectors/image/forgery/copy-move.js';
const image = await loadImage(process.argv[2]!);
for (const px of process.argv[3]!.split(',').map(Number)) {
  const small = await decodePixels(image, { channels: 1, maxPixels: px });
  const r = copyMoveDetection(new Float32Array(small.data), small.width, small.height, new AbortController().signal, {});
  console.log(px, small.width, small.height, r.peak, JSON.stringify(r.evidence).slice(0, 600));
}
