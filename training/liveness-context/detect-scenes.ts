/**
 * Runs the service's own face analysis (analyseFaces, server/src/detectors/face/face-analysis.ts,
 * emotion and spoof models off: they do not change the box) over the scene photos, so that the
 * live crops are cut around exactly the box the context model gets at inference. Writes one JSON
 * line per photo: file, width, height, faces [[x, y, w, h, score], ...] (largest first). Run from server/:
 *   node --import tsx ../training/liveness-context/detect-scenes.ts /work/data/pad2/scenes > /work/data/pad2/scene-faces.jsonl
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { analyseFaces } from '../../server/src/detectors/face/face-analysis.js';
import { decodeImage } from '../../server/src/detectors/face/image-input.js';

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : /\.(jpe?g|png)$/i.test(name) ? [path] : [];
  });
}

const root = process.argv[2]!;
const files = walk(root).sort();
let n = 0;
for (const path of files) {
  const image = await decodeImage(readFileSync(path));
  const faces = await analyseFaces(image, { emotion: false, spoof: false });
  process.stdout.write(JSON.stringify({ file: path.slice(root.length + 1), width: image.width, height: image.height, faces: faces.map((f) => [...f.box, f.detectionScore]) }) + '\n');
  if (++n % 250 === 0) process.stderr.write(`${n}/${files.length}\n`);
}
