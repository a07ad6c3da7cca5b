import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
const [src, dst] = process.argv.slice(2);
const files = (await readdir(src!)).filter((f) => /\.jpe?g$/i.test(f));
for (const f of files) await sharp(join(src!, f)).resize(1600, 1600, { fit: 'inside', withoutEnlargement: true }).jpeg({ quality: 70 }).toFile(join(dst!, f));
console.log(files.length);
