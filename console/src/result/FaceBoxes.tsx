import { useState } from 'react';
import type { Artifact } from '@mediaproof/sdk';

export interface FaceRecord {
  box: number[];
  age?: number;
  gender?: string;
  /** A word, or `{emotion, score}` as face-intelligence reports it. */
  emotion?: string | { emotion?: string };
  [field: string]: unknown;
}

const describe = (face: FaceRecord, index: number): string => {
  const emotion = typeof face.emotion === 'string' ? face.emotion : face.emotion?.emotion;
  const age = typeof face.age === 'number' ? `age ${Math.round(face.age)}` : null;
  return [`#${index + 1}`, age, typeof face.gender === 'string' && face.gender, emotion].filter(Boolean).join(' · ');
};

/** Face boxes ([x, y, width, height] in the image's pixels) drawn over the image. */
export function FaceBoxes({ image, faces, title }: { image: Artifact; faces: FaceRecord[]; title: string }) {
  const [size, setSize] = useState<{ width: number; height: number } | null>(null);
  return (
    <section className="card" aria-label={title}>
      <h2>{title}</h2>
      <div className="overlay-stack">
        <img src={image.downloadUrl} alt={title} onLoad={(e) => setSize({ width: e.currentTarget.naturalWidth, height: e.currentTarget.naturalHeight })} />
        {size && (
          <svg className="boxes" viewBox={`0 0 ${size.width} ${size.height}`} preserveAspectRatio="none" role="img" aria-label={`${faces.length} face boxes`}>
            {faces.map((face, i) => {
              const [x = 0, y = 0, w = 0, h = 0] = face.box;
              return (
                <g key={i} data-testid="face-box">
                  <rect x={x} y={y} width={w} height={h} vectorEffect="non-scaling-stroke" />
                  <text x={x} y={Math.max(12, y - 6)} fontSize={Math.max(12, size.width / 50)}>{describe(face, i)}</text>
                </g>
              );
            })}
          </svg>
        )}
      </div>
      <ul className="face-list">
        {faces.map((face, i) => (
          <li key={i}>
            {describe(face, i)}
            {typeof face.liveness === 'number' && <> · liveness {face.liveness.toFixed(2)}</>}
            {typeof (face.spoof as { verdict?: string } | undefined)?.verdict === 'string' && <> · spoof check {(face.spoof as { verdict: string }).verdict}</>}{' '}
            <span className="muted mono">box {face.box.map((v) => Math.round(v)).join(', ')}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
