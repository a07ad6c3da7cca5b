/**
 * Still images for the face models: the one image decoder's upright RGB view
 * (`decodeUpright`), bounded to the side the face models need.
 */
import sharp from 'sharp';
import { decodeUpright, type Raster, type UprightImage } from '../image/image-input.js';

/** Longest side the face models see; faces stay >= 100 px in all but crowd shots. */
export const ANALYSIS_MAX_SIDE = 2048;

export type DecodedImage = UprightImage;

export const decodeImage = (input: string | Buffer, maxSide = ANALYSIS_MAX_SIDE): Promise<DecodedImage> => decodeUpright(input, maxSide);

/**
 * The `side`-pixel square centred on a face box, its edge pixels repeated where it leaves the
 * image: the window the face models (face forgery, presentation attack) are cut from.
 */
export async function squareAroundBox(
  image: { data: Uint8Array; width: number; height: number; channels?: number },
  box: readonly [number, number, number, number],
  side: number,
): Promise<Raster> {
  const left = Math.round(box[0] + box[2] / 2 - side / 2);
  const top = Math.round(box[1] + box[3] / 2 - side / 2);
  const pad = { top: Math.max(0, -top), left: Math.max(0, -left), bottom: Math.max(0, top + side - image.height), right: Math.max(0, left + side - image.width) };
  const { data, info } = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: (image.channels ?? 3) as 3 | 4 } })
    .removeAlpha()
    .extend({ ...pad, extendWith: 'copy' })
    .extract({ left: left + pad.left, top: top + pad.top, width: side, height: side })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}
