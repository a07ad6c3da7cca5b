import { ScoreBar } from '../components';
import { KeyValues } from './KeyValues';

export interface SignalRecord {
  id: string;
  label: string;
  score: number | null;
  weight: number;
  evidence: unknown;
}

/** Every signal the detector weighed, with its score, weight and evidence. */
export function Signals({ signals }: { signals: SignalRecord[] }) {
  return (
    <section className="card" aria-labelledby="signals-title">
      <h2 id="signals-title">Signals</h2>
      <div className="table-wrap">
        <table className="signals">
          <thead>
            <tr><th scope="col">Signal</th><th scope="col">Score</th><th scope="col">Weight</th><th scope="col">Evidence</th></tr>
          </thead>
          <tbody>
            {signals.map((signal) => (
              <tr key={signal.id}>
                <td><strong>{signal.label}</strong><br /><span className="mono muted small">{signal.id}</span></td>
                <td><ScoreBar value={signal.score} /></td>
                <td>{signal.weight}</td>
                <td>
                  <details>
                    <summary>evidence</summary>
                    <KeyValues value={signal.evidence} />
                  </details>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
