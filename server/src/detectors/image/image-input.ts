/**
 * The one image decoder of every detector. Reading an uploaded image safely: the declared MIME
 * type is never trusted (the bytes are sniffed), decoding is bounded by one pixel limit, failures
 * are MediaErrors with one wording, and analysis runs on a copy scaled down to a bounded size
 * whose scale is reported with the result. `decodePixels` keeps the stored orientation (for
 * forensics: compression artefacts live on the stored grid), `decodeUpright` applies EXIF
 * orientation (RGB for the face models); document scans build on `openImage` and `imageMetadata`.
 */
import { readFile } from 'node:fs/promises';
import { fileTypeFromBuffer } from 'file-type';
import sharp, { type Metadata, type Sharp } from 'sharp';
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
  /**
   * An 8-bit RGB PNG without palette, alpha or colour profile: its decoded pixels, resized, are
   * exactly what decoding it scaled gives (a PNG has no shrink-on-load), so decodePixels reuses them.
   */
  plainRgbPng: boolean;
  /** Stored as grey levels (one colour channel, with or without alpha). */
  greyscale: boolean;
  /**
   * EXIF orientation, 1-8 (1 when the file has none): how the stored pixels are turned or mirrored
   * to be shown upright. Forensic maps, heatmaps and regions stay on the stored pixels.
   */
  orientation: number;
}

/** The size of a width x height stored image once shown upright: EXIF orientations 5-8 turn it by 90 degrees. */
export function uprightSize(width: number, height: number, orientation: number): { width: number; height: number } {
  return orientation >= 5 ? { width: height, height: width } : { width, height };
}

/** A box on the stored pixels (width x height) of an image with EXIF `orientation`, moved to where it lies once the image is shown upright. */
export function uprightBox<T extends { x: number; y: number; width: number; height: number }>(box: T, orientation: number, width: number, height: number): T {
  const { x, y, width: w, height: h } = box;
  switch (orientation) {
    case 2: return { ...box, x: width - x - w }; // mirrored left to right
    case 3: return { ...box, x: width - x - w, y: height - y - h }; // turned 180 degrees
    case 4: return { ...box, y: height - y - h }; // mirrored top to bottom
    case 5: return { ...box, x: y, y: x, width: h, height: w }; // transposed
    case 6: return { ...box, x: height - y - h, y: x, width: h, height: w }; // turned 90 degrees clockwise
    case 7: return { ...box, x: height - y - h, y: width - x - w, width: h, height: w }; // transversed
    case 8: return { ...box, x: y, y: width - x - w, width: h, height: w }; // turned 90 degrees anticlockwise
    default: return box;
  }
}

/** A sharp pipeline over untrusted bytes: refuses to decode beyond the pixel limit. */
export function openImage(input: string | Buffer, failOn: 'truncated' | 'error' = 'truncated'): Sharp {
  return sharp(input, { limitInputPixels: MAX_INPUT_PIXELS, failOn });
}

/** A decoding failure in the words every detector uses. */
export function decodeFailure(error: unknown): MediaError {
  if (error instanceof MediaError) return error;
  const reason = (error as Error).message ?? String(error);
  if (/pixel limit/i.test(reason)) return new MediaError(`the image exceeds the limit of ${MAX_INPUT_PIXELS / 1_000_000} megapixels`);
  return new MediaError(`the image cannot be decoded: ${reason}`);
}

/** Width, height, orientation and format, with the pixel limit checked before any decoding. */
export async function imageMetadata(input: string | Buffer): Promise<Metadata & { width: number; height: number }> {
  let metadata: Metadata;
  try {
    metadata = await openImage(input).metadata();
  } catch (error) {
    throw decodeFailure(error);
  }
  const { width, height } = metadata;
  if (!width || !height) throw new MediaError('the image has no pixels');
  if (width * height > MAX_INPUT_PIXELS) throw new MediaError(`the image has ${width}x${height} pixels, over the limit of ${MAX_INPUT_PIXELS / 1_000_000} megapixels`);
  return { ...metadata, width, height };
}

/** Reads the file, checks it really is a JPEG or PNG and that it decodes within the pixel limit. */
export async function loadImage(path: string): Promise<LoadedImage> {
  const bytes = await readFile(path);
  if (bytes.length === 0) throw new MediaError('the image file is empty');
  const type = await fileTypeFromBuffer(bytes);
  if (!type || (type.mime !== 'image/jpeg' && type.mime !== 'image/png')) {
    throw new MediaError(`the file is not a JPEG or PNG image (detected: ${type?.mime ?? 'unknown'})`);
  }
  const { width, height, hasAlpha, channels, depth, hasProfile, isPalette, space, orientation } = await imageMetadata(bytes);
  return {
    bytes,
    format: type.mime === 'image/jpeg' ? 'jpeg' : 'png',
    mime: type.mime,
    width,
    height,
    hasAlpha: Boolean(hasAlpha),
    plainRgbPng: type.mime === 'image/png' && channels === 3 && depth === 'uchar' && !hasAlpha && !hasProfile && !isPalette && space === 'srgb',
    greyscale: (channels ?? 3) - (hasAlpha ? 1 : 0) === 1,
    orientation: orientation && orientation >= 1 && orientation <= 8 ? orientation : 1,
  };
}

export interface Raster {
  /** Interleaved 8-bit samples, `channels` per pixel, row-major. */
  data: Buffer;
  width: number;
  height: number;
  channels: number;
}

/** The full-resolution RGB decode of each plain RGB PNG while it is being analysed (see LoadedImage.plainRgbPng). */
const decodedPngs = new WeakMap<LoadedImage, Raster>();

/**
 * Decodes to raw 8-bit pixels (full decode: truncated data fails here with a MediaError).
 * `maxPixels` downscales (area-averaging) so analysis cost stays bounded; `scale` is the
 * factor applied to each side. A plain RGB PNG decoded whole once is resized from those
 * pixels afterwards instead of being decoded again: the same bytes for less work (a 12 MP PNG
 * takes 0.2 s to decode, and forgery analysis asks for it four times).
 */
export async function decodePixels(
  image: LoadedImage,
  options: { channels: 1 | 3 | 4; maxPixels?: number },
): Promise<Raster & { scale: number }> {
  const pixels = image.width * image.height;
  const scale = options.maxPixels && pixels > options.maxPixels ? Math.sqrt(options.maxPixels / pixels) : 1;
  const decoded = decodedPngs.get(image);
  // No auto-orientation: compression artefacts live on the stored 8x8 grid, so forensic
  // maps stay in stored orientation.
  let pipeline = decoded && options.channels !== 4 ? sharp(decoded.data, { raw: { width: decoded.width, height: decoded.height, channels: 3 } }) : openImage(image.bytes);
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
    const raster = { data, width: info.width, height: info.height, channels: info.channels, scale };
    if (image.plainRgbPng && scale === 1 && info.channels === 3) decodedPngs.set(image, raster);
    return raster;
  } catch (error) {
    throw decodeFailure(error);
  }
}

/** An upright RGB image for the face models, and how it maps back to the original. */
export interface UprightImage {
  data: Uint8Array;
  width: number;
  height: number;
  /** Size of the upright original; `scale` maps analysis pixels back to it. */
  originalWidth: number;
  originalHeight: number;
  scale: number;
  format: string;
}

/**
 * Decodes with the EXIF orientation applied (a phone photo's face is upright for the models),
 * scaled down to fit `maxSide` (the face detector works on a 256-pixel view anyway).
 */
export async function decodeUpright(input: string | Buffer, maxSide: number): Promise<UprightImage> {
  const metadata = await imageMetadata(input);
  const { width: originalWidth, height: originalHeight } = uprightSize(metadata.width, metadata.height, metadata.orientation ?? 1);
  try {
    const { data, info } = await openImage(input, 'error')
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
    throw decodeFailure(error);
  }
}
