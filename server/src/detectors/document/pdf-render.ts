/**
 * Renders PDF pages to PNG with pdf.js (a maintained implementation of ISO 32000 rendering)
 * on @napi-rs/canvas, for OCR against the text layer and as the base of heatmaps.
 * Fonts come from pdf.js's bundled standard fonts and cmaps on disk; nothing is fetched.
 *
 * Only called after pdf-forensics has inflated every stream under its budget, so a
 * decompression bomb has already failed the job before pdf.js sees the file.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { MediaError } from '../types.js';

export interface RenderedPage {
  page: number;
  png: Buffer;
  width: number;
  height: number;
  /** Pixels per PDF point. */
  scale: number;
}

const MAX_RENDER_PIXELS = 12_000_000;

function pdfjsAssets() {
  const require = createRequire(import.meta.url);
  const root = dirname(require.resolve('pdfjs-dist/package.json'));
  return { standardFontDataUrl: join(root, 'standard_fonts') + '/', cMapUrl: join(root, 'cmaps') + '/' };
}

/** Loads pdf.js and its canvas binding once per thread (seconds on first use). */
export async function warmUpRenderer(): Promise<void> {
  await import('pdfjs-dist/legacy/build/pdf.mjs');
  await import('@napi-rs/canvas').catch(() => undefined);
}

/** Renders the given 1-based pages so that the longer side is about `longSide` pixels. */
export async function renderPdfPages(bytes: Uint8Array, pages: number[], longSide: number, signal: AbortSignal): Promise<RenderedPage[]> {
  if (pages.length === 0) return [];
  const { getDocument } = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const assets = pdfjsAssets();
  const task = getDocument({
    data: new Uint8Array(bytes),
    ...assets,
    cMapPacked: true,
    disableFontFace: true,
    useSystemFonts: false,
    isEvalSupported: false,
    enableXfa: false,
    stopAtErrors: false,
    verbosity: 0,
  });
  const onAbort = () => void task.destroy();
  signal.addEventListener('abort', onAbort, { once: true });
  const rendered: RenderedPage[] = [];
  try {
    const document = await task.promise.catch((error: Error) => {
      throw new MediaError(`the PDF could not be opened for rendering: ${error.message}`);
    });
    for (const number of pages) {
      signal.throwIfAborted();
      if (number < 1 || number > document.numPages) continue;
      const page = await document.getPage(number);
      const base = page.getViewport({ scale: 1 });
      let scale = longSide / Math.max(base.width, base.height);
      if (base.width * base.height * scale * scale > MAX_RENDER_PIXELS) scale = Math.sqrt(MAX_RENDER_PIXELS / (base.width * base.height));
      const viewport = page.getViewport({ scale });
      const width = Math.max(1, Math.round(viewport.width));
      const height = Math.max(1, Math.round(viewport.height));
      const factory = (
        document as unknown as {
          canvasFactory: { create(w: number, h: number): { canvas: { toBuffer(type: string): Buffer }; context: unknown } };
        }
      ).canvasFactory;
      const { canvas, context } = factory.create(width, height);
      await page.render({ canvasContext: context, viewport, canvas } as unknown as Parameters<typeof page.render>[0]).promise;
      rendered.push({ page: number, png: canvas.toBuffer('image/png'), width, height, scale });
      page.cleanup();
    }
    return rendered;
  } finally {
    signal.removeEventListener('abort', onAbort);
    await task.destroy().catch(() => undefined);
  }
}
