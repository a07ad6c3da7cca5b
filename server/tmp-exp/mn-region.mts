import { decodePixels, loadImage } from '../src/detectors/image/image-input.js';
import { lumaAndBlocking } from '../src/detectors/image/forgery.js';
import { missingCameraNoise } from '../src/detectors/image/forgery/missing-noise.js';
import fusion from '../src/detectors/image/forgery-fusion.json' with { type: 'json' };
import sharp from 'sharp';
for (const f of process.argv.slice(2)) {
  const image = await loadImage(f); const rgb = await decodePixels(image, { channels: 3 });
  const { luma } = lumaAndBlocking(rgb.data, rgb.width, rgb.height);
  const m = missingCameraNoise(luma, rgb.width, rgb.height, fusion.missingNoise.rule);
  const r: any = m.evidence.smoothestRegion;
  console.log(f.split('/').pop(), rgb.width, rgb.height, m.peak.toFixed(2), JSON.stringify(r), 'medianResidual', m.evidence.medianResidual);
  if (r) {
    const pad = 200; const x = Math.max(0, r.x - pad), y = Math.max(0, r.y - pad);
    const w = Math.min(rgb.width - x, r.width + 2 * pad), h = Math.min(rgb.height - y, r.height + 2 * pad);
    await sharp(rgb.data, { raw: { width: rgb.width, height: rgb.height, channels: 3 } }).extract({ left: x, top: y, width: w, height: h }).resize(700, 700, { fit: 'inside' }).png().toFile(`/tmp/${f.split('/').pop()}.crop.png`);
    await sharp(rgb.data, { raw: { width: rgb.width, height: rgb.height, channels: 3 } }).resize(700, 700, { fit: 'inside' }).png().toFile(`/tmp/${f.split('/').pop()}.whole.png`);
  }
}
