/** Any JSON value as nested definition lists (provenance claims, evidence), shallow enough to read. */
export function KeyValues({ value, depth = 0 }: { value: unknown; depth?: number }) {
  if (value === null || value === undefined) return <span className="muted">—</span>;
  if (typeof value !== 'object') return <span>{String(value)}</span>;
  if (depth >= 4) return <code className="small">{JSON.stringify(value).slice(0, 300)}</code>;
  if (Array.isArray(value)) {
    if (value.length === 0) return <span className="muted">none</span>;
    if (value.every((item) => typeof item !== 'object' || item === null)) return <span>{value.map(String).join(', ')}</span>;
    return (
      <ol className="kv-list">
        {value.slice(0, 50).map((item, i) => (
          <li key={i}><KeyValues value={item} depth={depth + 1} /></li>
        ))}
      </ol>
    );
  }
  return (
    <dl className="kv">
      {Object.entries(value as Record<string, unknown>).map(([key, item]) => (
        <div key={key}>
          <dt>{key}</dt>
          <dd><KeyValues value={item} depth={depth + 1} /></dd>
        </div>
      ))}
    </dl>
  );
}
