/**
 * Metadata evidence about an image's origin, read with exifr (EXIF, XMP, IPTC, PNG text):
 * - IPTC/XMP `Iptc4xmpExt:DigitalSourceType` (IPTC Photo Metadata Standard 2023.1, §
 *   Digital Source Type) such as `trainedAlgorithmicMedia`;
 * - generation parameters that open generators write: AUTOMATIC1111/Forge `parameters` (PNG
 *   text or JPEG EXIF UserComment), ComfyUI `prompt`/`workflow`, InvokeAI `Dream`,
 *   `sd-metadata`, `invokeai_metadata`, NovelAI `Software`/`Comment`, Fooocus, Midjourney
 *   `Description` job ids, and software tags naming a generator;
 * - camera-origin EXIF (make, model and exposure settings), which a camera writes and a
 *   generator does not, but which anyone can copy: weak evidence only.
 */
import exifr from 'exifr';

export interface GeneratorEvidence {
  generator: string;
  /** Which field carried it, e.g. `png:parameters`, `exif:UserComment`, `xmp:CreatorTool`. */
  field: string;
  excerpt: string;
}

export interface CameraEvidence {
  make?: string;
  model?: string;
  /** Exposure fields present (ExposureTime, FNumber, ISO, FocalLength, DateTimeOriginal…). */
  exposureFields: string[];
  software?: string;
}

export interface MetadataEvidence {
  /** IPTC digital source type URIs found in XMP/IPTC. */
  sourceTypes: string[];
  generators: GeneratorEvidence[];
  camera: CameraEvidence | null;
  /** dcterms:provenance or similar: a URL of a remote C2PA manifest. */
  provenanceUrl?: string;
  /** Segments exifr found (exif, xmp, iptc, ihdr…), for the record. */
  segments: string[];
}

/** Software names of image generators, matched in Software / CreatorTool / Credit fields. */
const GENERATOR_SOFTWARE: Array<[RegExp, string]> = [
  [/midjourney/i, 'Midjourney'],
  [/dall[\s·-]?e|openai|chatgpt/i, 'DALL-E (OpenAI)'],
  [/firefly/i, 'Adobe Firefly'],
  [/novelai/i, 'NovelAI'],
  [/stable[\s-]?diffusion|sdxl|automatic1111|comfyui|invokeai|fooocus|sd\.next/i, 'Stable Diffusion'],
  [/\bflux(\.1)?\b.*(dev|schnell|pro)|black forest labs/i, 'FLUX'],
  [/imagen|gemini|nano banana/i, 'Google Imagen'],
  [/ideogram/i, 'Ideogram'],
  [/leonardo\.ai/i, 'Leonardo.Ai'],
  [/bing image creator|microsoft designer/i, 'Microsoft Designer'],
  [/runway/i, 'Runway'],
  [/\bgrok\b|xai aurora/i, 'xAI'],
];

const EXPOSURE_FIELDS = ['ExposureTime', 'FNumber', 'ISO', 'FocalLength', 'DateTimeOriginal', 'LensModel', 'ExposureProgram', 'MeteringMode'];

export const excerptOf = (text: string) => (text.length > 200 ? `${text.slice(0, 200)}…` : text);

/** EXIF UserComment: 8-byte character-code prefix, then ASCII or UTF-16 text. */
export function decodeUserComment(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (!(value instanceof Uint8Array) || value.length < 8) return null;
  const prefix = Buffer.from(value.subarray(0, 8)).toString('latin1');
  const body = Buffer.from(value.subarray(8));
  if (prefix.startsWith('UNICODE')) {
    // The byte order is not recorded; text is mostly ASCII, so the zero bytes tell it.
    const bigEndian = body.length > 1 && body[0] === 0 && body[1] !== 0;
    const swapped = bigEndian ? Buffer.from(body).swap16() : body;
    return swapped.subarray(0, swapped.length - (swapped.length % 2)).toString('utf16le');
  }
  return body.toString('utf8').replace(/\0+$/, '');
}

/** Classifies free text that a generator wrote into a known tool, or null. */
function classifyGenerationText(key: string, text: string): string | null {
  const lowerKey = key.toLowerCase();
  if (lowerKey === 'parameters' || lowerKey === 'usercomment') {
    if (/\bSteps:\s*\d+/.test(text) && /\b(Sampler|CFG scale|Seed):/.test(text)) return 'Stable Diffusion web UI (AUTOMATIC1111/Forge)';
    if (/"(prompt|negative_prompt)"/.test(text) && /fooocus|"Performance"|"base_model"/i.test(text)) return 'Fooocus';
  }
  if (lowerKey === 'prompt' && /"class_type"\s*:/.test(text)) return 'ComfyUI';
  if (lowerKey === 'workflow' && /"nodes"\s*:/.test(text) && /"links"\s*:/.test(text)) return 'ComfyUI';
  if (lowerKey === 'dream' || lowerKey === 'sd-metadata' || lowerKey.startsWith('invokeai')) return 'InvokeAI';
  if (lowerKey === 'fooocus_scheme') return 'Fooocus';
  if (lowerKey === 'comment' && /"(uc|n_samples|noise_schedule)"\s*:/.test(text)) return 'NovelAI';
  if ((lowerKey === 'description' || lowerKey === 'imagedescription') && /\bJob ID:\s*[0-9a-f-]{16,}/i.test(text)) return 'Midjourney';
  return null;
}

function asText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  if (value && typeof value === 'object' && 'value' in value && typeof (value as { value: unknown }).value === 'string') {
    return (value as { value: string }).value; // XMP lang-alt
  }
  return null;
}

export async function readMetadata(bytes: Uint8Array): Promise<MetadataEvidence> {
  let parsed: Record<string, Record<string, unknown>> | undefined;
  try {
    parsed = await exifr.parse(Buffer.from(bytes), {
      tiff: true,
      exif: true,
      xmp: true,
      iptc: true,
      ihdr: true,
      icc: false,
      userComment: true,
      mergeOutput: false,
      translateValues: false,
      sanitize: true,
    } as never);
  } catch {
    parsed = undefined; // unreadable metadata is reported as absent
  }
  const evidence: MetadataEvidence = { sourceTypes: [], generators: [], camera: null, segments: Object.keys(parsed ?? {}) };
  if (!parsed) return evidence;

  const flat: Array<{ segment: string; key: string; value: unknown }> = [];
  for (const [segment, fields] of Object.entries(parsed)) {
    // Some blocks (userComment, makerNote) come back as top-level values, not field maps.
    if (fields instanceof Uint8Array || typeof fields !== 'object' || fields === null) {
      flat.push({ segment: 'exif', key: segment, value: fields });
      continue;
    }
    for (const [key, value] of Object.entries(fields)) flat.push({ segment, key, value });
  }
  const first = (key: string) => flat.find((entry) => entry.key === key)?.value;

  for (const { segment, key, value } of flat) {
    if (key === 'DigitalSourceType' || key === 'digitalsourcetype') {
      const text = asText(value);
      if (text) evidence.sourceTypes.push(text.trim());
      continue;
    }
    if (key === 'provenance' && typeof value === 'string' && /^https?:\/\//.test(value)) {
      evidence.provenanceUrl = value;
      continue;
    }
    const text = key === 'userComment' || key === 'UserComment' ? decodeUserComment(value) : asText(value);
    if (!text) continue;
    const fieldName = key === 'userComment' ? 'UserComment' : key;
    const fromText = classifyGenerationText(fieldName, text);
    if (fromText) {
      evidence.generators.push({ generator: fromText, field: `${segment === 'ihdr' ? 'png' : segment}:${fieldName}`, excerpt: excerptOf(text) });
      continue;
    }
    if (/^(Software|CreatorTool|Credit|Source|Creator|Artist|Make|Model|HostComputer)$/i.test(key)) {
      const match = GENERATOR_SOFTWARE.find(([pattern]) => pattern.test(text));
      if (match) evidence.generators.push({ generator: match[1], field: `${segment}:${key}`, excerpt: excerptOf(text) });
    }
  }

  const make = asText(first('Make'))?.trim();
  const model = asText(first('Model'))?.trim();
  const exposureFields = EXPOSURE_FIELDS.filter((field) => first(field) !== undefined && first(field) !== null);
  if (make || model || exposureFields.length > 0) {
    const software = asText(first('Software'))?.trim();
    evidence.camera = {
      ...(make && { make }),
      ...(model && { model }),
      exposureFields,
      ...(software && { software }),
    };
  }
  return evidence;
}

/** A camera-origin record: make or model plus at least three exposure fields. */
export function isCameraOrigin(camera: CameraEvidence | null): boolean {
  return Boolean(camera && (camera.make || camera.model) && camera.exposureFields.length >= 3);
}
