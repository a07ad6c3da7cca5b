/**
 * Still images for the face models: the one image decoder's upright RGB view
 * (`decodeUpright`), bounded to the side the face models need.
 */
import { decodeUpright, type UprightImage } from '../image/image-input.js';

/** Longest side the face models see; faces stay >= 100 px in all but crowd shots. */
export const ANALYSIS_MAX_SIDE = 2048;

export type DecodedImage = UprightImage;

export const decodeImage = (input: string | Buffer, maxSide = ANALYSIS_MAX_SIDE): Promise<DecodedImage> => decodeUpright(input, maxSide);
