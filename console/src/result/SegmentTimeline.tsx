export interface Segment {
  start: number;
  end: number;
  [field: string]: unknown;
}

const describe = (segment: Segment) =>
  Object.entries(segment)
    .filter(([key]) => key !== 'start' && key !== 'end')
    .map(([key, value]) => `${key} ${typeof value === 'number' ? Math.round(value * 1000) / 1000 : String(value)}`)
    .join(', ');

/** Segments (speech found by the detector, and what it measured in each) on a time axis. */
export function SegmentTimeline({ segments, durationSeconds, what = 'speech segments' }: { segments: Segment[]; durationSeconds?: number; what?: string }) {
  const end = durationSeconds ?? Math.max(...segments.map((s) => s.end), 1);
  return (
    <figure className="timeline">
      <svg viewBox="0 0 1000 24" preserveAspectRatio="none" role="img" aria-label={`${segments.length} segments over ${end.toFixed(1)} s`}>
        <rect x="0" y="10" width="1000" height="4" className="axis" />
        {segments.map((segment, i) => (
          <rect key={i} x={(segment.start / end) * 1000} y="2" width={Math.max(1, ((segment.end - segment.start) / end) * 1000)} height="20" className="segment">
            <title>{`${segment.start.toFixed(2)}–${segment.end.toFixed(2)} s: ${describe(segment)}`}</title>
          </rect>
        ))}
      </svg>
      <figcaption className="muted">{segments.length} {what}; hover one for what was measured in it.</figcaption>
    </figure>
  );
}
