/**
 * The named person's face on a 350x350 LFW photo, as the training scripts find it (lfw-landmarks.ts for SBI's
 * landmark hulls, measure-lfw-boxes.ts for train.py's LFW_BOX / LFW_DY): both must frame the photo alike, or the
 * measured box would not be the box the meshes came from.
 * The photo is framed by a grey border half its size (BlazeFace misses about a third of these faces when they
 * fill the frame); of the faces the service's Human detector finds (analyseFaces, no emotion / spoof modules),
 * the one whose box centre is nearest the photo's centre (LFW photos are centred on the named person).
 */
import type { Sharp } from 'sharp';
import { analyseFaces } from '../../server/src/detectors/face/face-analysis.js';
import { decodeImage } from '../../server/src/detectors/face/image-input.js';

export const LFW_SIDE = 350;
const BORDER = LFW_SIDE / 2;

/** Box [x, y, w, h] and 468-point mesh in the photo's own pixels, or null when no face is found. */
export async function centredFace(photo: Sharp): Promise<{ box: [number, number, number, number]; mesh: Array<[number, number]> } | null> {
  const framed = await photo.extend({ top: BORDER, bottom: BORDER, left: BORDER, right: BORDER, background: { r: 128, g: 128, b: 128 } }).png().toBuffer();
  const faces = await analyseFaces(await decodeImage(framed), { emotion: false, spoof: false });
  const offCentre = (box: readonly number[]) => Math.hypot(box[0]! + box[2]! / 2 - BORDER - LFW_SIDE / 2, box[1]! + box[3]! / 2 - BORDER - LFW_SIDE / 2);
  const face = faces.sort((a, b) => offCentre(a.boxAnalysisPixels) - offCentre(b.boxAnalysisPixels))[0];
  if (!face) return null;
  const [x, y, w, h] = face.boxAnalysisPixels;
  return { box: [x - BORDER, y - BORDER, w, h], mesh: face.meshAnalysisPixels.map(([px, py]) => [px - BORDER, py - BORDER]) };
}
