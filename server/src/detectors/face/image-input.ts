/**
 * Decodes an uploaded still image into RGB pixels for the face models, with the limits
 * every untrusted decoder needs: a pixel cap before decoding, EXIF orientation applied (a
 * phone photo's face is upright for the models), and large images scaled down because the
 * face detector works on a 256-pixel view anyway.
 */
import sharp from 'sharp';
import { MediaError } from '../types.js';
import type { RgbImage } from './human-runtime.js';

/** Refuse anything over 50 megapixels before decoding it. */
export const MAX_INPUT_PIXELS = 50_000_000;
/** Longest side the face models see; faces stay >= 100 px in all but crowd shots. */
export const ANALYSIS_MAX_SIDE = 2048;

export interface DecodedImage extends RgbImage {
  /** Size of the upright original; `scale` maps analysis pixels back to it. */
  originalWidth: number;
  originalHeight: number;
  scale: number;
  format: string;
}

export async function decodeImage(input: string | Buffer, maxSide = ANALYSIS_MAX_SIDE): Promise<DecodedImage> {
  try {
    const image = sharp(input, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' });
    const metadata = await image.metadata();
    if (!metadata.width || !metadata.height) throw new MediaError('the image has no dimensions');
    const swapped = (metadata.orientation ?? 1) >= 5; // EXIF orientations 5-8 rotate by 90°
    const originalWidth = swapped ? metadata.height : metadata.width;
    const originalHeight = swapped ? metadata.width : metadata.height;
    const { data, info } = await image
      .rotate()
      .resize({ width: maxSide, height: maxSide, fit: 'inside', withoutEnlargement: true })
      .removeAlpha()
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (info.channels !== 3) throw new MediaError(`unexpected channel count ${info.channels} after decoding`);
    return {
      data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
      width: info.width,
      height: info.height,
      originalWidth,
      originalHeight,
      scale: originalWidth / info.width,
      format: metadata.format ?? 'unknown',
    };
  } catch (error) {
    if (error instanceof MediaError) throw error;
    const reason = (error as Error).message ?? String(error);
    if (/pixel limit/i.test(reason)) {
      throw new MediaError(`the image exceeds the limit of ${MAX_INPUT_PIXELS / 1_000_000} megapixels`);
    }
    throw new MediaError(`the image could not be decoded: ${reason}`);
  }
}
