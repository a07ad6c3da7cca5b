import type { Artifact } from '@mediaproof/sdk';
import { FaceBoxes } from './FaceBoxes';
import { KeyValues } from './KeyValues';

export interface Finding {
  type: string;
  severity: string;
  page?: number;
  box?: number[];
  evidence?: unknown;
}

/** Document findings, most severe first, with their boxes drawn on the page image (images) and the page heatmaps. */
export function DocumentFindings({ findings, pageHeatmaps, image }: { findings: Finding[]; pageHeatmaps: Artifact[]; image?: Artifact }) {
  const boxed = findings.filter((f) => Array.isArray(f.box) && f.box.length === 4);
  return (
    <section className="card" aria-labelledby="findings-title">
      <h2 id="findings-title">Findings</h2>
      {findings.length === 0 ? (
        <p>No findings.</p>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr><th scope="col">Severity</th><th scope="col">Finding</th><th scope="col">Page</th><th scope="col">Evidence</th></tr>
            </thead>
            <tbody>
              {findings.map((finding, i) => (
                <tr key={i}>
                  <td><span className={`badge severity-${finding.severity}`}>{finding.severity}</span></td>
                  <td>{finding.type}</td>
                  <td>{finding.page ?? '—'}</td>
                  <td><KeyValues value={finding.evidence} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {image && boxed.length > 0 && <FaceBoxes image={image} faces={boxed.map((f) => ({ box: f.box!, emotion: f.type }))} title="Findings on the image" />}
      {pageHeatmaps.map((heatmap) => (
        <figure key={heatmap.id} className="page-heatmap">
          <img src={heatmap.downloadUrl} alt={`Where the findings are on ${heatmap.id.replace(/-heatmap.*$/, '').replace('-', ' ')}`} />
          <figcaption>{heatmap.id}</figcaption>
        </figure>
      ))}
    </section>
  );
}
