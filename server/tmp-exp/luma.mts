import { writeFile } from 'node:fs/promises';
import { decodePixels, loadImage } from '../src/detectors/image/image-input.js';
import { lumaAndBlocking } from '../src/detectors/image/forgery.js';
const image = await loadImage(process.argv[2]!);
const rgb = await decodePixels(image, { channels: 3 });
const { luma } = lumaAndBlocking(rgb.data, rgb.width, rgb.height);
await writeFile(process.argv[3]!, Buffer.from(luma.buffer));
console.log(rgb.width, rgb.height);
