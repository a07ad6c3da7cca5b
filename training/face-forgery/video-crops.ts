/**
 * v5: face crops from real videos, cut exactly as the service cuts them.
 *
 * For every video listed in <list.json> ([{ "id", "path", "frames" }]) this samples `frames`
 * frames with the service's own sampler (server/src/detectors/face/video-frames.ts: evenly spaced
 * slice centres, longest side <= 1280), finds faces with the service's Human detector
 * (analyseFaces, no emotion / spoof modules) and, for every face whose box is at least
 * MIN_FACE_SIDE px, writes
 *   <out>/<id>/<frame>-<face>.png       the model input: faceCrop(frame, box) resized to 128x128
 *                                        with sharp's cubic kernel, as imageTensor does;
 *   <out>/<id>/<frame>-<face>-wide.png  the same square enlarged 1.25x around the same centre at
 *                                        160x160 (the inference crop is its central 128x128,
 *                                        as in train.py's cached LFW crops: room for jitter);
 *   <out>/<id>/<frame>-<face>-mesh.json  (v9) Human's 468-point face mesh in the wide crop's pixels.
 * and <out>/<id>/boxes.json. A listed clip's optional "drop" (["<frame>-<face>", ...], from a survey
 * file's dropCrops, each looked at by eye) names false detections (a hand, a shoulder) that are not written;
 * boxes.json lists them under "dropped". Run from the repository root:
 *   node --import tsx training/face-forgery/video-crops.ts <list.json> <out>
 * v10: SHARE=0.9 SIZE=192 cut the wider crop (the crop side as a share of the box, the model input's
 * side; the wide copy is 1.25x both, 240 px); the defaults are v1-v9's 0.6 and 128.
 * Evaluation only for nothing here: this is data preparation; it never writes into the repo.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { sampleFrames } from '../../server/src/detectors/face/video-frames.js';
import { analyseFaces } from '../../server/src/detectors/face/face-analysis.js';
import { faceCrop, CROP_SHARE, MIN_FACE_SIDE } from '../../server/src/detectors/face/face-forgery.js';
import { squareAroundBox, squareOrigin } from '../../server/src/detectors/face/image-input.js';

const [listPath, outDir] = process.argv.slice(2);
if (!listPath || !outDir) throw new Error('usage: video-crops.ts <list.json> <out>');
const list = JSON.parse(await readFile(listPath, 'utf8')) as Array<{ id: string; path: string; frames: number; drop?: string[] }>;
const png = (r: { data: Uint8Array; width: number; height: number; channels: number }, side: number) =>
  sharp(r.data, { raw: { width: r.width, height: r.height, channels: r.channels as 3 | 4 } }).removeAlpha()
    .resize({ width: side, height: side, fit: 'fill', kernel: 'cubic' }).png().toBuffer();

const SHARE = Number(process.env.SHARE ?? CROP_SHARE);
const SIZE = Number(process.env.SIZE ?? 128);
/** Side of the saved wide crops (train.py's cached crops: the model input plus room for jitter). */
const WIDE_PIXELS = Math.round(1.25 * SIZE);

/**
 * v9: the face's 468-point mesh in the wide crop's pixels (WIDE_PIXELS), for landmark-hull blending
 * masks (train.py LANDMARKS); the wide square is centred on the box as squareAroundBox cuts it.
 */
function meshInWide(mesh: ReadonlyArray<readonly [number, number]>, box: readonly [number, number, number, number], wideSide: number) {
  const { left, top } = squareOrigin(box, wideSide);
  const scale = WIDE_PIXELS / wideSide;
  return mesh.map(([x, y]) => [Math.round((x - left) * scale * 10) / 10, Math.round((y - top) * scale * 10) / 10]);
}

for (const { id, path, frames: count, drop = [] } of list) {
  const t0 = performance.now();
  const dir = join(outDir, id);
  await mkdir(dir, { recursive: true });
  const video = await sampleFrames(path, count, new AbortController().signal);
  const rows = [];
  const dropped = [];
  for (const [f, frame] of video.frames.entries()) {
    const faces = await analyseFaces(frame, { emotion: false, spoof: false } as never);
    for (const [k, face] of faces.entries()) {
      const box = face.boxAnalysisPixels;
      const big = Math.max(box[2], box[3]);
      if (big < MIN_FACE_SIDE) continue;
      if (drop.includes(`${f}-${k}`)) { dropped.push({ frame: f, face: k, box }); continue; }
      const crop = await faceCrop(frame, box, SHARE);
      const side = crop.width; // faceCrop's square: SHARE x the box's larger side
      const wideSide = Math.round(side * 1.25);
      const wide = await squareAroundBox(frame, box, wideSide);
      await writeFile(join(dir, `${f}-${k}.png`), await png(crop, SIZE));
      await writeFile(join(dir, `${f}-${k}-wide.png`), await png(wide, WIDE_PIXELS));
      await writeFile(join(dir, `${f}-${k}-mesh.json`), JSON.stringify(meshInWide(face.meshAnalysisPixels, box, wideSide)));
      rows.push({ frame: f, face: k, time: frame.timeSeconds, box, cropSide: side, frameSize: [frame.width, frame.height] });
    }
  }
  await writeFile(join(dir, 'boxes.json'), JSON.stringify({ id, path, framesSampled: video.frames.length, durationSeconds: video.durationSeconds, faces: rows, dropped }));
  console.log(id, 'frames', video.frames.length, 'faces', rows.length, 'dropped', dropped.length, Math.round(performance.now() - t0), 'ms');
}
