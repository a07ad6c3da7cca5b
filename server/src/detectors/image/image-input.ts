/**
 * Reading an uploaded image safely: the declared MIME type is never trusted (the bytes are
 * sniffed), decoding is bounded by a pixel limit, and analysis runs on a copy scaled down to
 * a bounded size whose scale is reported with the result.
 */
import { readFile } from 'node:fs/promises';
import { fileTypeFromBuffer } from 'file-type';
import sharp from 'sharp';
import { MediaError } from '../types.js';

/** Largest decoded image accepted (pixels); sharp refuses to decode beyond it. */
export const MAX_INPUT_PIXELS = 100_000_000;

export type ImageFormat = 'jpeg' | 'png';

export interface LoadedImage {
  bytes: Buffer;
  format: ImageFormat;
  mime: 'image/jpeg' | 'image/png';
  width: number;
  height: number;
  hasAlpha: boolean;
}

/** Reads the file, checks it really is a JPEG or PNG and that it decodes within the pixel limit. */
export async function loadImage(path: string): Promise<LoadedImage> {
  const bytes = await readFile(path);
  if (bytes.length === 0) throw new MediaError('the image file is empty');
  const type = await fileTypeFromBuffer(bytes);
  if (!type || (type.mime !== 'image/jpeg' && type.mime !== 'image/png')) {
    throw new MediaError(`the file is not a JPEG or PNG image (detected: ${type?.mime ?? 'unknown'})`);
  }
  let metadata: Awaited<ReturnType<ReturnType<typeof sharp>['metadata']>>;
  try {
    metadata = await sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS }).metadata();
  } catch (error) {
    throw new MediaError(`the image cannot be read: ${(error as Error).message}`);
  }
  const width = metadata.width ?? 0;
  const height = metadata.height ?? 0;
  if (width * height > MAX_INPUT_PIXELS) {
    throw new MediaError(`the image has ${width}x${height} pixels, over the limit of ${MAX_INPUT_PIXELS}`);
  }
  if (width < 1 || height < 1) throw new MediaError('the image has no pixels');
  return {
    bytes,
    format: type.mime === 'image/jpeg' ? 'jpeg' : 'png',
    mime: type.mime,
    width,
    height,
    hasAlpha: Boolean(metadata.hasAlpha),
  };
}

export interface Raster {
  /** Interleaved 8-bit samples, `channels` per pixel, row-major. */
  data: Buffer;
  width: number;
  height: number;
  channels: number;
}

/**
 * Decodes to raw 8-bit pixels (full decode: truncated data fails here with a MediaError).
 * `maxPixels` downscales (area-averaging) so analysis cost stays bounded; `scale` is the
 * factor applied to each side.
 */
export async function decodePixels(
  image: LoadedImage,
  options: { channels: 1 | 3 | 4; maxPixels?: number },
): Promise<Raster & { scale: number }> {
  const pixels = image.width * image.height;
  const scale = options.maxPixels && pixels > options.maxPixels ? Math.sqrt(options.maxPixels / pixels) : 1;
  // No auto-orientation: compression artefacts live on the stored 8x8 grid, so forensic
  // maps stay in stored orientation.
  let pipeline = sharp(image.bytes, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'truncated' });
  if (scale < 1) {
    pipeline = pipeline.resize({
      width: Math.max(1, Math.round(image.width * scale)),
      height: Math.max(1, Math.round(image.height * scale)),
      kernel: 'cubic',
      fit: 'fill',
    });
  }
  if (options.channels === 1) pipeline = pipeline.greyscale();
  else if (options.channels === 3) pipeline = pipeline.removeAlpha();
  else pipeline = pipeline.ensureAlpha();
  try {
    const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true });
    return { data, width: info.width, height: info.height, channels: info.channels, scale };
  } catch (error) {
    throw new MediaError(`the image cannot be decoded: ${(error as Error).message}`);
  }
}
