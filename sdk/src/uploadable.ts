/**
 * Files the SDK can upload: a path (Node), bytes, or a Blob/File (Node and browsers).
 * Resolves name, size and content type, and opens a fresh body per upload attempt.
 */

export type Uploadable = string | Uint8Array | ArrayBuffer | Blob;

export interface ResolvedFile {
  fileName: string;
  sizeBytes: number;
  contentType: string;
  /** A fresh body (a stream in Node, so it can report progress; otherwise bytes or Blob). */
  open(onBytes?: (sent: number) => void): BodyInit;
}

const isNode = typeof globalThis.process !== 'undefined' && Boolean(globalThis.process.versions?.node);

const BY_EXTENSION: Record<string, string> = {
  jpg: 'image/jpeg', jpeg: 'image/jpeg', png: 'image/png', pdf: 'application/pdf',
  mp3: 'audio/mpeg', wav: 'audio/wav', m4a: 'audio/mp4', flac: 'audio/flac', ogg: 'audio/ogg', opus: 'audio/ogg', weba: 'audio/webm',
  mp4: 'video/mp4', mov: 'video/quicktime', webm: 'video/webm',
  // Not taken by any task, but named for what they are: a phone's photo is not "video/mp4".
  heic: 'image/heic', heif: 'image/heif', avif: 'image/avif',
};
const EXTENSION_FOR: Record<string, string> = {
  'image/jpeg': 'jpg', 'image/png': 'png', 'application/pdf': 'pdf', 'audio/mpeg': 'mp3', 'audio/wav': 'wav',
  'audio/mp4': 'm4a', 'audio/flac': 'flac', 'audio/ogg': 'ogg', 'audio/webm': 'weba', 'video/mp4': 'mp4', 'video/quicktime': 'mov', 'video/webm': 'webm',
};

export function contentTypeFromName(name: string): string | undefined {
  const extension = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase();
  return extension ? BY_EXTENSION[extension] : undefined;
}

/** Recognises the formats the service accepts from their first bytes. */
export function sniffContentType(head: Uint8Array): string | undefined {
  const ascii = (start: number, end: number) => String.fromCharCode(...head.subarray(start, end));
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (ascii(0, 8) === '\x89PNG\r\n\x1a\n') return 'image/png';
  if (ascii(0, 5) === '%PDF-') return 'application/pdf';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return 'audio/wav';
  if (ascii(0, 4) === 'fLaC') return 'audio/flac';
  if (ascii(0, 4) === 'OggS') return 'audio/ogg';
  // An MPEG audio frame's sync, with a layer (bits 2-1 not 00): layer 00 is an ADTS AAC stream, which no task takes.
  if (ascii(0, 3) === 'ID3' || (head[0] === 0xff && ((head[1] ?? 0) & 0xe0) === 0xe0 && ((head[1] ?? 0) & 0x06) !== 0)) return 'audio/mpeg';
  if (head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3) return 'video/webm';
  if (ascii(4, 8) === 'ftyp') {
    const brand = ascii(8, 12);
    if (brand === 'qt  ') return 'video/quicktime';
    if (brand.startsWith('M4A')) return 'audio/mp4';
    // HEIF still images share the ISO-BMFF box layout (ISO/IEC 23008-12): iPhone photos, AVIF.
    if (['heic', 'heix', 'heim', 'heis'].includes(brand)) return 'image/heic';
    if (['avif', 'avis'].includes(brand)) return 'image/avif';
    if (['mif1', 'msf1'].includes(brand)) return 'image/heif';
    return 'video/mp4';
  }
  return undefined;
}

/** One container, two names: a WebM or MP4 holding only sound is named as audio, otherwise as video. */
const SAME_CONTAINER: Record<string, string> = { 'video/webm': 'audio/webm', 'audio/webm': 'video/webm', 'video/mp4': 'audio/mp4', 'audio/mp4': 'video/mp4' };

/**
 * The content type to declare for a file a slot takes as `accepted`: the bare type without
 * parameters (a MediaRecorder blob is "audio/webm;codecs=opus"; the service stores bare types
 * only), or the same container's other name when only that one is accepted (a voice note saved
 * as `.webm` is found as video/webm, and an audio task takes audio/webm). Otherwise unchanged,
 * so that the service says what it takes.
 */
export function fitContentType(contentType: string, accepted: readonly string[]): string {
  const bare = contentType.split(';')[0]!.trim().toLowerCase();
  if (accepted.includes(bare)) return bare;
  const sibling = SAME_CONTAINER[bare];
  return sibling && accepted.includes(sibling) ? sibling : contentType;
}

const CHUNK = 64 * 1024;

/** A stream over bytes in chunks, counting what the consumer has pulled. */
function countingStream(source: ReadableStream<Uint8Array>, onBytes?: (sent: number) => void): ReadableStream<Uint8Array> {
  let sent = 0;
  return source.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        sent += chunk.byteLength;
        controller.enqueue(chunk);
        onBytes?.(sent);
      },
    }),
  );
}

function bytesStream(bytes: Uint8Array): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close();
      controller.enqueue(bytes.subarray(offset, offset + CHUNK));
      offset += CHUNK;
    },
  });
}

export async function resolveFile(input: Uploadable, overrides: { fileName?: string; contentType?: string } = {}): Promise<ResolvedFile> {
  if (typeof input === 'string') {
    if (!isNode) throw new TypeError('File paths can be uploaded only in Node; pass a Blob or bytes in a browser');
    const { stat, open } = await import('node:fs/promises');
    const { createReadStream } = await import('node:fs');
    const { Readable } = await import('node:stream');
    const { basename } = await import('node:path');
    const info = await stat(input);
    if (!info.isFile()) throw new TypeError(`${input} is not a file`);
    let contentType = overrides.contentType ?? contentTypeFromName(input);
    if (!contentType) {
      const handle = await open(input);
      try {
        const head = new Uint8Array(16);
        await handle.read(head, 0, 16, 0);
        contentType = sniffContentType(head);
      } finally {
        await handle.close();
      }
    }
    return {
      fileName: overrides.fileName ?? basename(input),
      sizeBytes: info.size,
      contentType: contentType ?? 'application/octet-stream',
      open: (onBytes) => countingStream(Readable.toWeb(createReadStream(input)) as ReadableStream<Uint8Array>, onBytes),
    };
  }
  if (typeof Blob !== 'undefined' && input instanceof Blob) {
    const head = new Uint8Array(await input.slice(0, 16).arrayBuffer());
    const name = overrides.fileName ?? ((input as { name?: unknown }).name as string | undefined);
    const contentType = overrides.contentType ?? (input.type || undefined) ?? (name ? contentTypeFromName(name) : undefined) ?? sniffContentType(head) ?? 'application/octet-stream';
    return {
      fileName: name || `upload.${EXTENSION_FOR[contentType] ?? 'bin'}`,
      sizeBytes: input.size,
      contentType,
      open: (onBytes) => (isNode ? countingStream(input.stream() as ReadableStream<Uint8Array>, onBytes) : input),
    };
  }
  const bytes = input instanceof ArrayBuffer ? new Uint8Array(input) : (input as Uint8Array);
  const contentType = overrides.contentType ?? (overrides.fileName ? contentTypeFromName(overrides.fileName) : undefined) ?? sniffContentType(bytes.subarray(0, 16)) ?? 'application/octet-stream';
  return {
    fileName: overrides.fileName ?? `upload.${EXTENSION_FOR[contentType] ?? 'bin'}`,
    sizeBytes: bytes.byteLength,
    contentType,
    open: (onBytes) => (isNode ? countingStream(bytesStream(bytes), onBytes) : new Blob([bytes as Uint8Array<ArrayBuffer>])),
  };
}
