/**
 * "Stealth PNG info" of Stable Diffusion web UI (the sd-webui-stealth-pnginfo extension, also
 * built into Forge and SD.Next): the generation parameters hidden in the least significant
 * bits of the alpha channel (or of R, G, B), read column by column, behind a 15-byte
 * signature, a 32-bit bit count and the UTF-8 (optionally gzipped) text.
 */
import { gunzipSync } from 'node:zlib';
import type { Raster } from './image-input.js';

const SIGNATURES = {
  stealth_pnginfo: { channels: 'alpha', compressed: false },
  stealth_pngcomp: { channels: 'alpha', compressed: true },
  stealth_rgbinfo: { channels: 'rgb', compressed: false },
  stealth_rgbcomp: { channels: 'rgb', compressed: true },
} as const;
const SIGNATURE_BITS = 15 * 8;
/** Largest hidden text accepted (bits), so a crafted file cannot make us allocate much. */
const MAX_PAYLOAD_BITS = 8 * 1024 * 1024;

export interface StealthInfo {
  signature: string;
  text: string;
}

/** Reads the hidden parameters from an RGBA raster, or null when no signature is present. */
export function readStealthPngInfo(raster: Raster): StealthInfo | null {
  if (raster.channels !== 4) return null;
  for (const mode of ['alpha', 'rgb'] as const) {
    const bitsPerPixel = mode === 'alpha' ? 1 : 3;
    const capacity = raster.width * raster.height * bitsPerPixel;
    if (capacity < SIGNATURE_BITS + 32) return null;
    // Bit k of the stream: pixel index k / bitsPerPixel in column-major order.
    const bitAt = (k: number): number => {
      const pixel = Math.floor(k / bitsPerPixel);
      const x = Math.floor(pixel / raster.height);
      const y = pixel % raster.height;
      const channel = mode === 'alpha' ? 3 : k % bitsPerPixel;
      return raster.data[(y * raster.width + x) * 4 + channel]! & 1;
    };
    const readBytes = (startBit: number, count: number): Buffer => {
      const out = Buffer.alloc(count);
      for (let i = 0; i < count; i++) {
        let value = 0;
        for (let b = 0; b < 8; b++) value = (value << 1) | bitAt(startBit + i * 8 + b);
        out[i] = value;
      }
      return out;
    };
    const signature = readBytes(0, 15).toString('latin1');
    const kind = SIGNATURES[signature as keyof typeof SIGNATURES];
    if (!kind || kind.channels !== mode) continue;
    const lengthBits = readBytes(SIGNATURE_BITS, 4).readUInt32BE(0);
    if (lengthBits === 0 || lengthBits > MAX_PAYLOAD_BITS || SIGNATURE_BITS + 32 + lengthBits > capacity) return null;
    const payload = readBytes(SIGNATURE_BITS + 32, Math.floor(lengthBits / 8));
    try {
      const text = kind.compressed ? gunzipSync(payload, { maxOutputLength: 4 * 1024 * 1024 }).toString('utf8') : payload.toString('utf8');
      return { signature, text };
    } catch {
      return null;
    }
  }
  return null;
}
