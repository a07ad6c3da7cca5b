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

/** Top-left corner of the `side`-pixel square centred on a face box (pixels may lie outside the image). */
export function squareOrigin(box: readonly [number, number, number, number], side: number): { left: number; top: number } {
  return { left: Math.round(box[0] + box[2] / 2 - side / 2), top: Math.round(box[1] + box[3] / 2 - side / 2) };
}

/**
 * The `side`-pixel square centred on a face box, its edge pixels repeated where it leaves the
 * image: the window the face models (face forgery, presentation attack) are cut from.
 */
export async function squareAroundBox(
  image: { data: Uint8Array; width: number; height: number; channels?: number },
  box: readonly [number, number, number, number],
  side: number,
): Promise<Raster> {
  const { left, top } = squareOrigin(box, side);
  // sharp always extracts before it extends, whatever the call order: so cut the part of the
  // square inside the image first, then repeat its edges out to the full square.
  const inside = {
    left: clamp(left, 0, image.width - 1),
    top: clamp(top, 0, image.height - 1),
    right: clamp(left + side, 1, image.width),
    bottom: clamp(top + side, 1, image.height),
  };
  const width = Math.max(1, inside.right - inside.left);
  const height = Math.max(1, inside.bottom - inside.top);
  const padLeft = clamp(inside.left - left, 0, side - width);
  const padTop = clamp(inside.top - top, 0, side - height);
  const pad = { left: padLeft, top: padTop, right: side - width - padLeft, bottom: side - height - padTop };
  const { data, info } = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: (image.channels ?? 3) as 3 | 4 } })
    .removeAlpha()
    .extract({ left: inside.left, top: inside.top, width, height })
    .extend({ ...pad, extendWith: 'copy' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

const clamp = (value: number, low: number, high: number) => Math.min(high, Math.max(low, value));
