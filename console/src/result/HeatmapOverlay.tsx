import { useEffect, useRef, useState } from 'react';
import { TransformComponent, TransformWrapper } from 'react-zoom-pan-pinch';
import type { Artifact } from '@mediaproof/sdk';

/**
 * Paints a greyscale heatmap as colour over transparency: its range is stretched between the
 * 5th and 99th percentile (detectors' maps are often low-contrast), then low values fade out
 * and high ones run from orange to red, so the image stays readable where nothing was found.
 */
function paintHeat(source: HTMLImageElement, canvas: HTMLCanvasElement): void {
  const { naturalWidth: width, naturalHeight: height } = source;
  canvas.width = width;
  canvas.height = height;
  const context = canvas.getContext('2d', { willReadFrequently: true })!;
  context.drawImage(source, 0, 0);
  const image = context.getImageData(0, 0, width, height);
  const pixels = image.data;
  const histogram = new Uint32Array(256);
  for (let i = 0; i < pixels.length; i += 4) histogram[pixels[i]!]!++;
  const percentile = (share: number) => {
    let seen = 0;
    for (let v = 0; v < 256; v++) if ((seen += histogram[v]!) >= share * width * height) return v;
    return 255;
  };
  const low = percentile(0.05);
  const high = Math.max(low + 1, percentile(0.99));
  for (let i = 0; i < pixels.length; i += 4) {
    const heat = Math.min(1, Math.max(0, (pixels[i]! - low) / (high - low)));
    pixels[i] = 255;
    pixels[i + 1] = Math.round(200 * (1 - heat));
    pixels[i + 2] = 0;
    pixels[i + 3] = Math.round(255 * heat * heat);
  }
  context.putImageData(image, 0, 0);
}

/**
 * The detector's heatmap over the analysed image: an opacity slider and zoom (wheel, pinch, buttons).
 * The image is drawn as stored in the file, as the heatmap is: browsers turn a photo by its EXIF
 * `orientation`, which would lay a sideways phone photo's heatmap across the wrong pixels.
 */
export function HeatmapOverlay({ image, heatmap, orientation = 1 }: { image: Artifact; heatmap: Artifact; orientation?: number }) {
  const [opacity, setOpacity] = useState(0.7);
  const canvas = useRef<HTMLCanvasElement>(null);
  const source = useRef<HTMLImageElement>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const img = source.current;
    if (!img || !canvas.current) return;
    const paint = () => {
      try {
        paintHeat(img, canvas.current!);
      } catch {
        // A store on another origin without CORS taints the canvas: the heatmap is still shown below.
        setError('The heatmap cannot be drawn over the image (the object store sends no CORS headers); it is shown below.');
      }
    };
    if (img.complete && img.naturalWidth) paint();
    else img.addEventListener('load', paint, { once: true });
    return () => img.removeEventListener('load', paint);
  }, [heatmap.downloadUrl]);

  const id = `opacity-${heatmap.id}`;
  return (
    <section className="card" aria-label={`Heatmap ${heatmap.id}`}>
      <h2>Heatmap <span className="muted small">{heatmap.id}</span></h2>
      <TransformWrapper minScale={1} maxScale={8}>
        {({ zoomIn, zoomOut, resetTransform }) => (
          <>
            <div className="controls no-print">
              <label htmlFor={id}>Opacity</label>
              <input id={id} type="range" min={0} max={1} step={0.05} value={opacity} onChange={(e) => setOpacity(Number(e.target.value))} />
              <span className="mono">{Math.round(opacity * 100)}%</span>
              <button type="button" onClick={() => zoomIn()}>Zoom in</button>
              <button type="button" onClick={() => zoomOut()}>Zoom out</button>
              <button type="button" onClick={() => resetTransform()}>Reset</button>
            </div>
            <p className="muted small">Red marks where the detector found the most evidence of manipulation, orange less; the raw heatmap is below.</p>
            {orientation !== 1 && (
              <p className="muted small" data-testid="stored-orientation">
                Shown as stored in the file, where the analysis reads it: the file asks viewers to turn or mirror it (EXIF orientation {orientation}), so it may look sideways here.
              </p>
            )}
            <TransformComponent wrapperClass="zoom-frame">
              <div className="overlay-stack">
                <img src={image.downloadUrl} className="as-stored" data-testid="heatmap-base" alt="The analysed image, as stored in the file" />
                <canvas ref={canvas} className="heat" data-testid="heatmap-overlay" style={{ opacity }} aria-hidden="true" />
              </div>
            </TransformComponent>
          </>
        )}
      </TransformWrapper>
      {error && <p className="error">{error}</p>}
      <img ref={source} className="heatmap-source" data-testid="heatmap-image" crossOrigin="anonymous" src={heatmap.downloadUrl} alt="Heatmap: brighter areas carry more evidence of manipulation" />
    </section>
  );
}
