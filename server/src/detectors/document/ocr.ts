/**
 * Offline OCR with tesseract.js (Tesseract LSTM engine; Smith, "An Overview of the Tesseract
 * OCR Engine", ICDAR 2007). The English model ships in @tesseract.js-data/eng and is read
 * from disk as a local langPath: nothing is downloaded.
 *
 * tesseract.js runs the engine in its own worker thread. One engine is created per detector
 * thread on first use and reused; if a job is aborted mid-recognition the engine is
 * terminated (recognition cannot be interrupted otherwise) and recreated for the next job.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createWorker, type Worker } from 'tesseract.js';

export interface OcrWord {
  text: string;
  confidence: number;
  /** Pixel box in the recognised image: x0,y0 top-left, x1,y1 bottom-right. */
  bbox: { x0: number; y0: number; x1: number; y1: number };
}

let engine: Promise<Worker> | null = null;
let idleTimer: NodeJS.Timeout | undefined;
/** An engine idle this long is shut down, so its thread does not keep a finished process alive. */
const IDLE_SHUTDOWN_MS = 15_000;

function languagePath(): string {
  const require = createRequire(import.meta.url);
  // best_int: the integer-quantised "best" model, fast on CPU and accurate on print.
  return join(dirname(require.resolve('@tesseract.js-data/eng/package.json')), '4.0.0_best_int');
}

export function ocrEngine(): Promise<Worker> {
  clearTimeout(idleTimer);
  scheduleIdleShutdown();
  if (!engine) {
    engine = createWorker('eng', 1, { langPath: languagePath(), cacheMethod: 'none', gzip: true });
    engine.catch(() => {
      engine = null;
    });
  }
  return engine;
}

function scheduleIdleShutdown(): void {
  idleTimer = setTimeout(() => void terminateOcr(), IDLE_SHUTDOWN_MS);
  idleTimer.unref();
}

export async function terminateOcr(): Promise<void> {
  const current = engine;
  engine = null;
  if (current) await (await current).terminate().catch(() => undefined);
}

/** Recognises words in an encoded image (PNG/JPEG bytes). */
export async function recognizeWords(image: Buffer, signal: AbortSignal): Promise<OcrWord[]> {
  signal.throwIfAborted();
  const worker = await ocrEngine();
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => {
      void terminateOcr();
      reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const result = await Promise.race([worker.recognize(image, {}, { blocks: true, text: false }), aborted]);
    const words: OcrWord[] = [];
    for (const block of result.data.blocks ?? []) {
      for (const paragraph of block.paragraphs) {
        for (const line of paragraph.lines) {
          for (const word of line.words) {
            if (word.text.trim()) words.push({ text: word.text, confidence: word.confidence, bbox: word.bbox });
          }
        }
      }
    }
    return words;
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
    clearTimeout(idleTimer);
    scheduleIdleShutdown();
  }
}
