/**
 * Provenance of an audio file: C2PA content credentials (C2PA Technical Specification 2.1,
 * which covers MP3, WAV and MP4/M4A), container tags (ID3v2 frames, RIFF INFO, iTunes atoms, as
 * ffmpeg reports them) naming a known speech generator, and encoder traces.
 */
import { readFile } from 'node:fs/promises';
import { AI_SOURCE_TYPES, CAPTURE_SOURCE_TYPES, readC2pa, sourceTypeName, type C2paEvidence } from '../image/c2pa.js';

/** Speech and music generators whose names appear in tags they write or users keep. */
const GENERATOR_PATTERNS: Array<[string, RegExp]> = [
  ['ElevenLabs', /eleven\s*labs/i],
  ['OpenAI TTS', /openai|\bgpt-4o(?:-mini)?-tts\b|\btts-1(?:-hd)?\b/i],
  ['Amazon Polly', /\bpolly\b/i],
  ['Google Cloud TTS / WaveNet', /google (?:cloud )?text-to-speech|\bwavenet\b|\bchirp\b/i],
  ['Azure Neural TTS', /azure (?:neural|speech|tts)|microsoft neural voice/i],
  ['Murf', /\bmurf(?:\.ai)?\b/i],
  ['Resemble AI', /resemble(?:\.ai| ai)/i],
  ['PlayHT', /play\.?ht/i],
  ['WellSaid', /wellsaid/i],
  ['Descript Overdub', /overdub/i],
  ['Speechify', /speechify/i],
  ['LOVO / Genny', /\blovo(?:\.ai)?\b|\bgenny\b/i],
  ['Coqui / XTTS', /\bcoqui\b|\bxtts\b/i],
  ['Tortoise TTS', /tortoise[- ]tts/i],
  ['Bark', /suno[- ]bark|\bbark tts\b/i],
  ['Suno', /\bsuno\b/i],
  ['Udio', /\budio\b/i],
  ['RVC / so-vits-svc', /\brvc\b|so-vits/i],
  ['Cartesia', /cartesia/i],
  ['Fish Audio', /fish\s*audio/i],
  ['Respeecher', /respeecher/i],
  ['Generic TTS marker', /text[- ]to[- ]speech|\bsynthesi[sz]ed (?:speech|voice)\b|\bai[- ]generated\b|\bvoice clon/i],
];

export interface TagEvidence {
  /** Every tag ffmpeg reports for the input, keys lower-cased. */
  tags: Record<string, string>;
  encoders: string[];
  generatorMatches: Array<{ generator: string; tag: string; value: string }>;
  /** The container as ffmpeg names it (mp3, wav, mov,mp4,m4a,…). */
  container: string | null;
  bitrateKbps: number | null;
}

/** Reads tags from ffmpeg's report of the input (before any output section). */
export function readTags(report: string): TagEvidence {
  const inputSection = report.split(/\nOutput #|\nStream mapping:/)[0] ?? report;
  const tags: Record<string, string> = {};
  const encoders: string[] = [];
  for (const match of inputSection.matchAll(/^\s{4,}([A-Za-z0-9_ -]+?)\s*: (.*)$/gm)) {
    const key = match[1]!.trim().toLowerCase();
    const value = match[2]!.trim();
    if (['duration', 'stream #0', 'chapter'].some((skip) => key.startsWith(skip))) continue;
    if (key === 'encoder' || key === 'encoded_by' || key === 'encoding_tool' || key === 'software') encoders.push(value);
    // Capped: lyrics or embedded text can be long, and results are read by people.
    tags[key] = (tags[key] ? `${tags[key]} | ${value}` : value).slice(0, 300);
  }
  const generatorMatches: TagEvidence['generatorMatches'] = [];
  for (const [key, value] of Object.entries(tags)) {
    for (const [generator, pattern] of GENERATOR_PATTERNS) {
      if (pattern.test(value) || pattern.test(key)) generatorMatches.push({ generator, tag: key, value: value.slice(0, 200) });
    }
  }
  const container = /Input #0, ([^,\n]+(?:,[^,\n ]+)*?), from/.exec(inputSection)?.[1] ?? null;
  const bitrate = /Duration:[^\n]*bitrate: (\d+) kb\/s/.exec(inputSection);
  return { tags, encoders: [...new Set(encoders)], generatorMatches, container, bitrateKbps: bitrate ? Number(bitrate[1]) : null };
}

/** The MIME type C2PA needs, from the container ffmpeg found (never from the client's claim). */
export function mimeForContainer(container: string | null): string | null {
  if (!container) return null;
  if (/\bmp3\b/.test(container)) return 'audio/mpeg';
  if (/\bwav\b/.test(container)) return 'audio/wav';
  if (/\bmp4\b|\bm4a\b|\bmov\b/.test(container)) return 'audio/mp4';
  if (/\bflac\b/.test(container)) return 'audio/flac';
  return null;
}

export interface C2paSummary extends C2paEvidence {
  /** 'ai' when the manifest declares trained-model output, 'capture' for a recording, else null. */
  declares: 'ai' | 'capture' | null;
}

export async function readAudioC2pa(path: string, mime: string | null, trustAnchors: string | null = null): Promise<C2paSummary> {
  if (!mime) {
    return { status: 'absent', failures: [], signerTrusted: false, actions: [], sourceTypes: [], ingredientSourceTypes: [], declares: null };
  }
  const evidence = await readC2pa(new Uint8Array(await readFile(path)), mime, trustAnchors);
  const names = evidence.sourceTypes.map(sourceTypeName);
  const declares = names.some((n) => AI_SOURCE_TYPES.has(n)) ? 'ai' : names.some((n) => CAPTURE_SOURCE_TYPES.has(n)) ? 'capture' : null;
  return { ...evidence, declares };
}
