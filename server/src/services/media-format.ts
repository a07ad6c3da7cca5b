/**
 * Checks that uploaded bytes really are the declared format, by their magic bytes
 * (file-type). Containers are compared by family: an M4A, MP4 and MOV are all ISO-BMFF
 * and their brand says little about the content, so a declared MP4 holding a `qt  ` brand
 * is still accepted.
 */
import { fileTypeFromBuffer } from 'file-type';
import type { FormatId } from '../detectors/catalogue.js';

type Family = 'jpeg' | 'png' | 'pdf' | 'mp3' | 'wav' | 'flac' | 'ogg' | 'isobmff' | 'matroska';

const FAMILY_OF_FORMAT: Record<FormatId, Family> = {
  jpeg: 'jpeg', png: 'png', pdf: 'pdf', mp3: 'mp3', wav: 'wav', m4a: 'isobmff', flac: 'flac', ogg: 'ogg', weba: 'matroska', mp4: 'isobmff', mov: 'isobmff', webm: 'matroska',
};

const FAMILY_OF_EXTENSION: Record<string, Family> = {
  jpg: 'jpeg', png: 'png', pdf: 'pdf', mp3: 'mp3', wav: 'wav', flac: 'flac', ogg: 'ogg', oga: 'ogg', opus: 'ogg', spx: 'ogg',
  mp4: 'isobmff', m4a: 'isobmff', m4v: 'isobmff', m4b: 'isobmff', mov: 'isobmff', '3gp': 'isobmff', '3g2': 'isobmff', heic: 'isobmff', avif: 'isobmff',
  webm: 'matroska', mkv: 'matroska',
};

/** Bytes needed from the start of a file to recognise every format above. */
export const SNIFF_BYTES = 4100;

export interface SniffResult {
  matches: boolean;
  detected: string;
}

/** Types a client declares when it does not know what the file is: the bytes decide (finalize). */
export const GENERIC_MIME_TYPES: readonly string[] = ['application/octet-stream', 'binary/octet-stream'];

/** The first of `allowed` that the bytes are, by their magic bytes; undefined when none. */
export async function sniffFormat(head: Uint8Array, allowed: readonly FormatId[]): Promise<{ format: FormatId | undefined; detected: string }> {
  const type = await fileTypeFromBuffer(head);
  if (!type) return { format: undefined, detected: 'unrecognised bytes' };
  return { format: allowed.find((format) => FAMILY_OF_FORMAT[format] === FAMILY_OF_EXTENSION[type.ext]), detected: type.mime };
}

export async function sniffMatches(head: Uint8Array, declared: FormatId): Promise<SniffResult> {
  const type = await fileTypeFromBuffer(head);
  if (!type) return { matches: false, detected: 'unrecognised bytes' };
  return { matches: FAMILY_OF_EXTENSION[type.ext] === FAMILY_OF_FORMAT[declared], detected: type.mime };
}
