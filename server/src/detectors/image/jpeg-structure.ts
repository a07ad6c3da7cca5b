/**
 * The marker structure of a JPEG file (ITU-T T.81 §B.2: DQT, SOF, APPn, COM), read without
 * decoding: the quantisation tables say which encoder and quality produced the file
 * (IJG quality scaling, libjpeg `jcparam.c`), the APP segments which writer. No npm package
 * exposes these, so this small parser exists; sharp decodes the pixels.
 */

/** Zigzag order: position k of the stream holds natural-order coefficient ZIGZAG[k]. */
export const ZIGZAG = [
  0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57,
  50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
];

/** Annex K luminance / chrominance tables (natural order), the base of IJG quality scaling. */
export const ANNEX_K_LUMA = [
  16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62, 18, 22,
  37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92, 49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99,
];
export const ANNEX_K_CHROMA = [
  17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99, 24, 26, 56, 99, 99, 99, 99, 99, 47, 66, 99, 99, 99, 99, 99, 99, 99, 99,
  99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
];

export interface JpegStructure {
  /** Quantisation tables by id, natural (row-major) order. */
  quantTables: Map<number, number[]>;
  /** Component id → quantisation table id and sampling factors, from SOF. */
  components: Array<{ id: number; h: number; v: number; tableId: number }>;
  progressive: boolean;
  /** APPn segments in file order, named by their identifier (JFIF, Exif, http://ns.adobe.com/xap/1.0/, ICC_PROFILE, JP (JUMBF), Adobe, Photoshop 3.0…). */
  appSegments: string[];
  comments: string[];
}

export function parseJpegStructure(bytes: Uint8Array): JpegStructure | null {
  if (bytes.length < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8) return null;
  const structure: JpegStructure = { quantTables: new Map(), components: [], progressive: false, appSegments: [], comments: [] };
  let offset = 2;
  while (offset + 4 <= bytes.length) {
    if (bytes[offset] !== 0xff) return structure; // lost sync: keep what was read
    const marker = bytes[offset + 1]!;
    if (marker === 0xff) {
      offset++;
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) break; // end of image / start of scan: headers are done
    const length = (bytes[offset + 2]! << 8) | bytes[offset + 3]!;
    const start = offset + 4;
    const end = offset + 2 + length;
    if (length < 2 || end > bytes.length) break;
    if (marker === 0xdb) {
      for (let p = start; p < end; ) {
        const precision = bytes[p]! >> 4;
        const id = bytes[p]! & 0x0f;
        p++;
        const table = new Array<number>(64);
        for (let k = 0; k < 64; k++) {
          table[ZIGZAG[k]!] = precision ? (bytes[p + 2 * k]! << 8) | bytes[p + 2 * k + 1]! : bytes[p + k]!;
        }
        p += precision ? 128 : 64;
        structure.quantTables.set(id, table);
      }
    } else if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      structure.progressive = marker === 0xc2 || marker === 0xc6 || marker === 0xca || marker === 0xce;
      const count = bytes[start + 5]!;
      for (let c = 0; c < count; c++) {
        const p = start + 6 + c * 3;
        structure.components.push({ id: bytes[p]!, h: bytes[p + 1]! >> 4, v: bytes[p + 1]! & 0x0f, tableId: bytes[p + 2]! });
      }
    } else if (marker >= 0xe0 && marker <= 0xef) {
      let nameEnd = start;
      while (nameEnd < end && nameEnd - start < 40 && bytes[nameEnd] !== 0) nameEnd++;
      const name = Buffer.from(bytes.subarray(start, nameEnd)).toString('latin1').replace(/[^\x20-\x7e]/g, '');
      structure.appSegments.push(`APP${marker - 0xe0}:${name}`);
    } else if (marker === 0xfe) {
      structure.comments.push(Buffer.from(bytes.subarray(start, Math.min(end, start + 200))).toString('latin1'));
    }
    offset = end;
  }
  return structure;
}

/**
 * IJG quality (1–100) that best reproduces a table from the Annex K base, and how well it
 * fits (mean absolute error in quantiser steps; 0 = exactly libjpeg's scaling).
 */
export function estimateIjgQuality(table: readonly number[], base: readonly number[] = ANNEX_K_LUMA): { quality: number; error: number } {
  let best = { quality: 50, error: Infinity };
  for (let quality = 1; quality <= 100; quality++) {
    const expected = ijgTable(quality, base);
    let error = 0;
    for (let i = 0; i < 64; i++) error += Math.abs(expected[i]! - table[i]!);
    error /= 64;
    if (error < best.error) best = { quality, error };
  }
  return best;
}

/** The table libjpeg writes at `quality` (`jpeg_quality_scaling`, baseline: clamped to 1..255). */
export function ijgTable(quality: number, base: readonly number[] = ANNEX_K_LUMA): number[] {
  const scale = quality < 50 ? 5000 / quality : 200 - quality * 2;
  return base.map((q) => Math.min(255, Math.max(1, Math.floor((q * scale + 50) / 100))));
}

/** Luminance table: the one the first (Y) component uses. */
export function lumaTable(structure: JpegStructure): number[] | null {
  const tableId = structure.components[0]?.tableId ?? 0;
  return structure.quantTables.get(tableId) ?? structure.quantTables.values().next().value ?? null;
}
