/**
 * Heatmap artifacts for document findings: the page, dimmed to grey, with each localised
 * finding painted in a translucent colour whose strength follows its severity.
 */
import sharp from 'sharp';
import type { Severity } from './findings.js';

export interface HeatRegion {
  /** Pixel box on the base image, origin top-left. */
  x: number;
  y: number;
  width: number;
  height: number;
  /** 0..1 strength. */
  intensity: number;
}

export const SEVERITY_INTENSITY: Record<Severity, number> = { info: 0.15, low: 0.35, medium: 0.65, high: 1 };

export async function paintHeatmap(base: Buffer, regions: HeatRegion[]): Promise<Buffer> {
  const image = sharp(base).greyscale();
  const { width = 1, height = 1 } = await image.metadata();
  const rects = regions
    .map((region) => {
      const x = Math.max(0, Math.round(region.x));
      const y = Math.max(0, Math.round(region.y));
      const w = Math.max(2, Math.min(width - x, Math.round(region.width)));
      const h = Math.max(2, Math.min(height - y, Math.round(region.height)));
      const alpha = (0.2 + 0.45 * Math.min(1, Math.max(0, region.intensity))).toFixed(2);
      const hue = region.intensity >= 0.8 ? '230,20,20' : region.intensity >= 0.5 ? '245,120,0' : '240,200,0';
      return `<rect x="${x}" y="${y}" width="${w}" height="${h}" fill="rgba(${hue},${alpha})" stroke="rgb(${hue})" stroke-width="2"/>`;
    })
    .join('');
  const overlay = Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${rects}</svg>`);
  return image
    .linear(0.6, 100) // dim the page so the marks stand out
    .toColourspace('srgb')
    .composite([{ input: overlay, top: 0, left: 0 }])
    .png({ compressionLevel: 6 })
    .toBuffer();
}
