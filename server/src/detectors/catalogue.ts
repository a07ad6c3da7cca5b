/**
 * The one catalogue of task types (SPEC.md §2.1) and the detector that serves each.
 * Everything that needs to know about a task type (validation, pricing, limits, timeouts,
 * the worker threads, the console, the OpenAPI document) reads it from here.
 */
import { RESULT_SCHEMAS, type ResultSchemaName } from '../schemas/result.schema.js';
import type { Detector, VerdictFlag } from './types.js';

/** A file format the service accepts, with the MIME types clients declare for it. */
export type FormatId = 'jpeg' | 'png' | 'pdf' | 'mp3' | 'wav' | 'm4a' | 'flac' | 'ogg' | 'weba' | 'mp4' | 'mov' | 'webm';

export const FORMATS: Record<FormatId, { label: string; mimeTypes: readonly string[] }> = {
  jpeg: { label: 'JPEG', mimeTypes: ['image/jpeg', 'image/jpg', 'image/pjpeg'] },
  png: { label: 'PNG', mimeTypes: ['image/png'] },
  pdf: { label: 'PDF', mimeTypes: ['application/pdf'] },
  mp3: { label: 'MP3', mimeTypes: ['audio/mpeg', 'audio/mp3'] },
  wav: { label: 'WAV', mimeTypes: ['audio/wav', 'audio/x-wav', 'audio/wave', 'audio/vnd.wave'] },
  m4a: { label: 'M4A', mimeTypes: ['audio/mp4', 'audio/x-m4a', 'audio/m4a'] },
  flac: { label: 'FLAC', mimeTypes: ['audio/flac', 'audio/x-flac'] },
  ogg: { label: 'OGG (Opus, Vorbis)', mimeTypes: ['audio/ogg', 'audio/opus', 'application/ogg'] },
  weba: { label: 'WebM audio', mimeTypes: ['audio/webm'] },
  mp4: { label: 'MP4', mimeTypes: ['video/mp4'] },
  mov: { label: 'MOV', mimeTypes: ['video/quicktime'] },
  webm: { label: 'WebM', mimeTypes: ['video/webm'] },
};

export interface SlotSpec {
  name: string;
  required: boolean;
  formats: readonly FormatId[];
  description: string;
}

export interface TaskType {
  id: number;
  slug: string;
  /** The model code Authenta's SDKs and the media-record API name the task type by. */
  modelCode: string;
  purpose: string;
  formats: readonly FormatId[];
  timeoutSeconds: number;
  slots: readonly SlotSpec[];
  /** Credits: base price per job plus a price per started MiB of input (DESIGN.md §5). */
  price: { base: number; perMiB: number };
  /** Largest accepted input file in bytes (answered with 413 FILE_TOO_LARGE). */
  maxFileBytes: number;
  /** The boolean the verdict sets, for verdict-style task types. */
  verdictFlag: VerdictFlag | null;
  /** The schema of its result document (schemas/result.schema.ts). */
  result: ResultSchemaName;
  /** Loads the detector module inside a worker thread; null until the detector is built. */
  detector: (() => Promise<{ default: Detector }>) | null;
}

const MiB = 1024 * 1024;
const IMAGE: readonly FormatId[] = ['jpeg', 'png'];
// People's recordings come as FLAC, OGG/Opus (voice notes) and WebM audio (browsers) too.
const AUDIO: readonly FormatId[] = ['mp3', 'wav', 'm4a', 'flac', 'ogg', 'weba'];

const original = (formats: readonly FormatId[], description = 'the file to analyse'): SlotSpec => ({
  name: 'original',
  required: true,
  formats,
  description,
});
const reference: SlotSpec = {
  name: 'reference',
  required: false,
  formats: IMAGE,
  description: 'a reference face image to verify the subject against',
};

export const TASK_TYPES: readonly TaskType[] = [
  {
    id: 1,
    slug: 'ai-image-detection',
    modelCode: 'AC-1',
    purpose: 'AI-generated or real image',
    formats: IMAGE,
    timeoutSeconds: 300,
    slots: [original(IMAGE)],
    price: { base: 1, perMiB: 0 },
    maxFileBytes: 50 * MiB,
    verdictFlag: 'isAiGenerated',
    result: 'AiGeneratedResult',
    detector: () => import('./image/ai-image.js'),
  },
  {
    id: 2,
    slug: 'ai-audio-detection',
    modelCode: 'AF-1',
    purpose: 'AI-generated or real audio',
    formats: AUDIO,
    timeoutSeconds: 600,
    slots: [original(AUDIO)],
    price: { base: 2, perMiB: 1 },
    maxFileBytes: 200 * MiB,
    verdictFlag: 'isAiGenerated',
    result: 'AiGeneratedResult',
    detector: () => import('./audio/ai-audio.js'),
  },
  {
    id: 3,
    slug: 'ai-video-detection',
    modelCode: 'VF-1',
    purpose: 'AI-generated or real video',
    formats: ['mp4', 'mov', 'webm'],
    timeoutSeconds: 600,
    slots: [original(['mp4', 'mov', 'webm'])],
    price: { base: 5, perMiB: 1 },
    maxFileBytes: 1024 * MiB,
    verdictFlag: 'isAiGenerated',
    result: 'AiGeneratedResult',
    detector: () => import('./video/ai-video.js'),
  },
  {
    id: 4,
    slug: 'faceswap-detection',
    modelCode: 'DF-1',
    purpose: 'face swapped or manipulated in video',
    formats: ['mp4', 'mov', 'webm'],
    timeoutSeconds: 1800,
    slots: [original(['mp4', 'mov', 'webm'])],
    price: { base: 10, perMiB: 1 },
    maxFileBytes: 1024 * MiB,
    verdictFlag: 'isDeepFake',
    result: 'DeepFakeResult',
    detector: () => import('./face/faceswap-detection.js'),
  },
  {
    id: 5,
    slug: 'image-forgery-detection',
    modelCode: 'FD-1',
    purpose: 'forged or tampered image',
    formats: IMAGE,
    timeoutSeconds: 300,
    slots: [original(IMAGE)],
    price: { base: 2, perMiB: 0 },
    maxFileBytes: 50 * MiB,
    verdictFlag: 'isForged',
    result: 'ForgeryResult',
    detector: () => import('./image/forgery.js'),
  },
  {
    id: 6,
    slug: 'document-intelligence',
    modelCode: 'DI-1',
    purpose: 'forged or tampered document',
    formats: ['jpeg', 'png', 'pdf'],
    timeoutSeconds: 300,
    slots: [original(['jpeg', 'png', 'pdf'])],
    price: { base: 3, perMiB: 1 },
    maxFileBytes: 50 * MiB,
    verdictFlag: 'isForged',
    result: 'ForgeryResult',
    detector: () => import('./document/document-intelligence.js'),
  },
  {
    id: 7,
    slug: 'face-liveness-detection',
    modelCode: 'FL-1',
    purpose: 'face in image real or spoofed',
    formats: IMAGE,
    timeoutSeconds: 600,
    slots: [original(IMAGE)],
    price: { base: 2, perMiB: 0 },
    maxFileBytes: 30 * MiB,
    verdictFlag: 'isSpoof',
    result: 'SpoofResult',
    detector: () => import('./face/face-liveness.js'),
  },
  {
    id: 8,
    slug: 'face-intelligence',
    modelCode: 'FI-1',
    purpose: 'combined face analysis and verification',
    formats: ['jpeg', 'png', 'mp4', 'webm', 'mov'],
    timeoutSeconds: 600,
    slots: [original(['jpeg', 'png', 'mp4', 'webm', 'mov']), reference],
    price: { base: 3, perMiB: 1 },
    maxFileBytes: 500 * MiB,
    verdictFlag: null,
    result: 'FaceIntelligenceResult',
    detector: () => import('./face/face-intelligence.js'),
  },
  {
    id: 9,
    slug: 'face-embedding',
    modelCode: 'FE-1',
    purpose: 'face embedding vectors from images',
    formats: IMAGE,
    timeoutSeconds: 600,
    slots: [original(IMAGE)],
    price: { base: 1, perMiB: 0 },
    maxFileBytes: 30 * MiB,
    verdictFlag: null,
    result: 'FaceEmbeddingResult',
    detector: () => import('./face/face-embedding.js'),
  },
  {
    id: 10,
    slug: 'audio-splitter',
    modelCode: 'AS-1',
    purpose: 'splits audio into foreground and background tracks',
    formats: AUDIO,
    timeoutSeconds: 600,
    slots: [original(AUDIO)],
    price: { base: 2, perMiB: 1 },
    maxFileBytes: 200 * MiB,
    verdictFlag: null,
    result: 'AudioSplitterResult',
    detector: () => import('./audio/audio-splitter.js'),
  },
  {
    id: 11,
    slug: 'ekyc-deepfake',
    modelCode: 'ED-1',
    purpose: 'enhanced deepfake detection for identity-verification flows',
    // The selfie video, and the optional reference photo's formats.
    formats: ['mp4', 'mov', 'webm', 'jpeg', 'png'],
    timeoutSeconds: 600,
    slots: [original(['mp4', 'mov', 'webm']), reference],
    price: { base: 5, perMiB: 1 },
    maxFileBytes: 500 * MiB,
    verdictFlag: 'isDeepFake',
    result: 'DeepFakeResult',
    detector: () => import('./face/ekyc-deepfake.js'),
  },
];

export function taskTypeById(id: number): TaskType | undefined {
  return TASK_TYPES.find((taskType) => taskType.id === id);
}

export function taskTypeBySlug(slug: string): TaskType | undefined {
  return TASK_TYPES.find((taskType) => taskType.slug === slug);
}

/** `AC-1` … `ED-1`, case-insensitive, as Authenta's SDKs send them. */
export function taskTypeByModelCode(code: string): TaskType | undefined {
  const upper = code.toUpperCase();
  return TASK_TYPES.find((taskType) => taskType.modelCode === upper);
}

export const MODEL_CODES: readonly string[] = TASK_TYPES.map((taskType) => taskType.modelCode);

/**
 * The format a declared MIME type names. Only a bare `type/subtype` of RFC 9110 token
 * characters is read: parameters and anything else are refused, because the declared type is
 * stored, signed into upload URLs and sent back as a Content-Type header on every download.
 */
export function formatForMime(contentType: string): FormatId | undefined {
  if (!/^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+$/.test(contentType)) return undefined;
  const mime = contentType.toLowerCase();
  return (Object.keys(FORMATS) as FormatId[]).find((id) => FORMATS[id].mimeTypes.includes(mime));
}

/** Checked at start: ids and slugs unique, every slot format within the task's formats. */
export function assertCatalogueConsistent(taskTypes: readonly TaskType[] = TASK_TYPES): void {
  const ids = new Set<number>();
  const slugs = new Set<string>();
  for (const taskType of taskTypes) {
    if (ids.has(taskType.id) || slugs.has(taskType.slug) || taskTypes.some((other) => other !== taskType && other.modelCode === taskType.modelCode)) {
      throw new Error(`catalogue: task type ${taskType.id} (${taskType.slug}) is declared twice`);
    }
    ids.add(taskType.id);
    slugs.add(taskType.slug);
    if (!taskType.slots.some((slot) => slot.name === 'original' && slot.required)) {
      throw new Error(`catalogue: task type ${taskType.slug} has no required 'original' slot`);
    }
    // A slot may take only formats its task type lists (prices, limits and the API's format list come from the task type).
    for (const slot of taskType.slots) {
      const foreign = slot.formats.filter((format) => !taskType.formats.includes(format));
      if (foreign.length) throw new Error(`catalogue: slot '${slot.name}' of ${taskType.slug} takes ${foreign.join(', ')}, which the task type does not list`);
    }
    // A verdict-style task type's result schema must require the flag its verdict sets.
    const required: readonly string[] = RESULT_SCHEMAS[taskType.result]?.required ?? [];
    if (!RESULT_SCHEMAS[taskType.result]) throw new Error(`catalogue: ${taskType.slug} names no known result schema (${taskType.result})`);
    if (taskType.verdictFlag && !required.includes(taskType.verdictFlag)) {
      throw new Error(`catalogue: the result schema ${taskType.result} of ${taskType.slug} does not require its flag ${taskType.verdictFlag}`);
    }
  }
}
