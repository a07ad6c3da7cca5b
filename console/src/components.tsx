/** Small pieces shared by the pages. */
import { useQuery } from '@tanstack/react-query';
import type { JobStatus, TaskType } from '@mediaproof/sdk';
import { client } from './api';

export const TERMINAL: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);

export function useTaskTypes() {
  return useQuery({ queryKey: ['task-types'], queryFn: () => client.taskTypes.list(), staleTime: 5 * 60_000 });
}

export const taskTypeName = (taskTypes: TaskType[] | undefined, id: number): string => taskTypes?.find((t) => t.id === id)?.slug ?? `task ${id}`;

export function StatusBadge({ status }: { status: JobStatus | string }) {
  return <span className={`badge status-${status}`}>{status.replaceAll('_', ' ')}</span>;
}

export function VerdictBadge({ verdict }: { verdict: string }) {
  return <span className={`badge verdict-${verdict}`}>{verdict}</span>;
}

/** A 0–1 score as a bar with its number (the number is what a screen reader reads). */
export function ScoreBar({ value, label }: { value: number | null | undefined; label?: string }) {
  if (value === null || value === undefined || !Number.isFinite(value)) return <span className="muted">—</span>;
  return (
    <span className="score" title={label}>
      <span className="score-track" aria-hidden="true">
        <span className="score-fill" style={{ width: `${Math.round(Math.max(0, Math.min(1, value)) * 100)}%` }} />
      </span>
      <span className="score-number">{value.toFixed(3)}</span>
    </span>
  );
}

export function Pager({ page, pages, onPage }: { page: number; pages: number; onPage(page: number): void }) {
  if (pages <= 1) return null;
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>← Previous</button>
      <span>
        Page {page} of {pages}
      </span>
      <button type="button" disabled={page >= pages} onClick={() => onPage(page + 1)}>Next →</button>
    </nav>
  );
}

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  return <p className="error" role="alert">{error instanceof Error ? error.message : String(error)}</p>;
}
