import { writeFile } from 'node:fs/promises';
import sharp from 'sharp';
const [width, height] = [4000, 3000];
const coarse = await sharp({ create: { width: Math.ceil(width / 8), height: Math.ceil(height / 8), channels: 3, background: '#000', noise: { type: 'gaussian', mean: 128, sigma: 60 } } }).resize(width, height, { kernel: 'cubic' }).raw().toBuffer();
const fine = await sharp({ create: { width, height, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 128, sigma: 6 } } }).raw().toBuffer();
for (let i = 0; i < coarse.length; i++) coarse[i] = Math.max(0, Math.min(255, coarse[i]! + fine[i]! - 128));
await writeFile('/work/data/ref/bench12.jpg', await sharp(coarse, { raw: { width, height, channels: 3 } }).jpeg({ quality: 90 }).toBuffer());
