/**
 * What a video file says about its own origin, read without decoding a frame:
 * - C2PA content credentials in the MP4/MOV container (C2PA Technical Specification 2.1,
 *   §A.4 "Embedding manifests into BMFF-based assets"), which OpenAI's Sora, Adobe and
 *   others write, read by the same reader as images;
 * - an XMP packet's IPTC `DigitalSourceType` (IPTC Photo Metadata Standard 2023.1; XMP
 *   Specification Part 3 §1.2.7 puts XMP in a `uuid` box of BMFF files);
 * - container tags naming a generator: ComfyUI's VideoHelperSuite writes the whole
 *   prompt/workflow graph into the `comment` tag, and generator services name themselves in
 *   `encoder`, `software`, `comment` or `title`;
 * - tags a phone's camera app writes (com.apple.quicktime.make/model, com.android.*),
 *   which lean towards a recording but can be copied: reported, never decisive.
 */
import { open, stat } from 'node:fs/promises';
import { readC2pa, type C2paEvidence } from '../image/c2pa.js';
import { excerptOf, type GeneratorEvidence, type MetadataEvidence } from '../image/generator-metadata.js';
import { runFfmpeg } from '../media/ffmpeg.js';

/** Video generators and avatar services, matched in the container's text tags. */
const VIDEO_GENERATORS: Array<[RegExp, string]> = [
  [/\bsora\b/i, 'OpenAI Sora'],
  [/\brunway(ml)?\b|\bgen-?[234]\b/i, 'Runway'],
  [/\bpika(\.art| labs)?\b/i, 'Pika'],
  [/\bkling\b|kuaishou/i, 'Kling'],
  [/luma (dream machine|ai)|dream machine/i, 'Luma Dream Machine'],
  [/\bveo ?[0-9]?\b|google deepmind/i, 'Google Veo'],
  [/hailuo|minimax/i, 'MiniMax Hailuo'],
  [/stable[ -]?video[ -]?diffusion|\bsvd(_xt)?\b/i, 'Stable Video Diffusion'],
  [/animatediff/i, 'AnimateDiff'],
  [/hunyuan ?video/i, 'HunyuanVideo'],
  [/\bwan ?2\.[0-9]\b|wan-?video/i, 'Wan'],
  [/ltx-?video/i, 'LTX-Video'],
  [/cogvideo/i, 'CogVideoX'],
  [/\bmochi\b/i, 'Mochi'],
  [/heygen/i, 'HeyGen'],
  [/synthesia/i, 'Synthesia'],
  [/\bd-id\b/i, 'D-ID'],
  [/deforum/i, 'Deforum'],
  [/comfyui|videohelpersuite/i, 'ComfyUI'],
];

/** ComfyUI graphs: nodes with a `class_type`, the signature of its saved prompt/workflow. */
const COMFY_GRAPH = /"class_type"\s*:\s*"[^"]+"|"last_node_id"\s*:\s*\d+/;
const CAMERA_TAG = /^(com\.apple\.quicktime\.(make|model|software)|com\.android\.(version|capture\.fps|manufacturer|model))$/i;
/** Files up to this size are read whole for C2PA (the reader needs the bytes); larger ones are not. */
const C2PA_MAX_BYTES = 256 * 1024 * 1024;
/** XMP is looked for in the first and last bytes of the file, where `moov`/`uuid` boxes sit. */
const XMP_SCAN_BYTES = 8 * 1024 * 1024;

export interface VideoProvenance {
  c2pa: C2paEvidence;
  metadata: MetadataEvidence;
  /** Container tags as `key=value` (values shortened), for the record. */
  tags: string[];
  /** Tags a phone's camera app writes. */
  cameraTags: string[];
}

/** The container's global and stream tags, as ffmpeg's ffmetadata writer prints them (full values). */
export async function containerTags(path: string, signal: AbortSignal): Promise<Array<[string, string]>> {
  const { stdout } = await runFfmpeg(['-i', path, '-map_metadata', '0', '-f', 'ffmetadata', 'pipe:1'], { signal, maxOutputBytes: 8 * 1024 * 1024 });
  const tags: Array<[string, string]> = [];
  // ffmetadata escapes '=', ';', '#', '\' and newlines with a backslash; a value may span lines.
  const text = stdout.toString('utf8').replace(/\\\n/g, '\n');
  for (const line of text.split(/(?<!\\)\n/)) {
    if (!line || line.startsWith(';') || line.startsWith('[')) continue;
    const split = line.search(/(?<!\\)=/);
    if (split <= 0) continue;
    const unescape = (value: string) => value.replace(/\\([=;#\\\n])/g, '$1');
    tags.push([unescape(line.slice(0, split)).toLowerCase(), unescape(line.slice(split + 1))]);
  }
  return tags;
}

/** IPTC digital source types declared in an XMP packet near the start or end of the file. */
export async function xmpSourceTypes(path: string): Promise<string[]> {
  const { size } = await stat(path);
  const file = await open(path, 'r');
  try {
    const ranges = size <= 2 * XMP_SCAN_BYTES ? [[0, size]] : [[0, XMP_SCAN_BYTES], [size - XMP_SCAN_BYTES, XMP_SCAN_BYTES]];
    const found = new Set<string>();
    for (const [position, length] of ranges) {
      const buffer = Buffer.alloc(length!);
      const { bytesRead } = await file.read(buffer, 0, length!, position!);
      const text = buffer.subarray(0, bytesRead).toString('latin1');
      for (const packet of text.matchAll(/<x:xmpmeta[\s\S]{0,200000}?<\/x:xmpmeta>/g)) {
        for (const match of packet[0].matchAll(/DigitalSourceType(?:>|\s*=\s*")\s*([^<"\s]+)/g)) found.add(match[1]!);
      }
    }
    return [...found];
  } finally {
    await file.close();
  }
}

/** Generators named by the container's tags (a ComfyUI graph counts as one). */
export function generatorsInTags(tags: Array<[string, string]>): GeneratorEvidence[] {
  const found: GeneratorEvidence[] = [];
  for (const [key, value] of tags) {
    if (CAMERA_TAG.test(key)) continue;
    if (COMFY_GRAPH.test(value)) {
      found.push({ generator: 'ComfyUI (workflow graph)', field: `tag:${key}`, excerpt: excerptOf(value) });
      continue;
    }
    const named = VIDEO_GENERATORS.find(([pattern]) => pattern.test(value));
    if (named) found.push({ generator: named[1], field: `tag:${key}`, excerpt: excerptOf(value) });
  }
  return found;
}

export async function readVideoProvenance(path: string, mime: string, signal: AbortSignal, trustAnchors: string | null = null): Promise<VideoProvenance> {
  const { size } = await stat(path);
  const [tags, sourceTypes] = await Promise.all([containerTags(path, signal), xmpSourceTypes(path)]);
  signal.throwIfAborted();
  let c2pa: C2paEvidence;
  const empty: C2paEvidence = { status: 'absent', failures: [], signerTrusted: false, actions: [], sourceTypes: [], ingredientSourceTypes: [] };
  if (/webm|matroska/i.test(mime)) {
    // C2PA defines no embedding for WebM/Matroska: such a file carries no manifest.
    c2pa = empty;
  } else if (size <= C2PA_MAX_BYTES) {
    const file = await open(path, 'r');
    try {
      c2pa = await readC2pa(new Uint8Array(await file.readFile()), mime, trustAnchors);
    } finally {
      await file.close();
    }
  } else {
    c2pa = { ...empty, status: 'error', error: `the file is over ${C2PA_MAX_BYTES / 1024 / 1024} MiB; C2PA was not read` };
  }
  return {
    c2pa,
    metadata: { sourceTypes, generators: generatorsInTags(tags), camera: null, segments: ['container-tags', ...(sourceTypes.length ? ['xmp'] : [])] },
    tags: tags.map(([key, value]) => `${key}=${excerptOf(value)}`),
    cameraTags: tags.filter(([key]) => CAMERA_TAG.test(key)).map(([key, value]) => `${key}=${excerptOf(value)}`),
  };
}
