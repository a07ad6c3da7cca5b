import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from 'react-router-dom';
import { client, formatBytes, formatDate } from '../api';
import { useAuth } from '../auth';
import { ErrorNote, StatusBadge, TERMINAL } from '../components';
import { ResultView } from '../result/ResultView';

export function JobPage() {
  const { jobId = '' } = useParams();
  const { user } = useAuth();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const job = useQuery({
    queryKey: ['job', jobId],
    queryFn: () => client.jobs.retrieve(jobId),
    // Live status while it runs; signed artifact URLs are renewed with the job every few minutes.
    refetchInterval: (query) => (query.state.data && TERMINAL.has(query.state.data.status) ? 5 * 60_000 : 1500),
  });
  const cancel = useMutation({ mutationFn: () => client.jobs.cancel(jobId), onSuccess: () => queryClient.invalidateQueries({ queryKey: ['job', jobId] }) });
  const remove = useMutation({
    mutationFn: () => client.jobs.delete(jobId),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['jobs'] });
      navigate('/');
    },
  });

  if (job.isPending) return <p role="status">Loading job…</p>;
  if (job.error) return <ErrorNote error={job.error} />;
  const data = job.data;
  return (
    <article className="job" aria-labelledby="job-title">
      <div className="page-head">
        <div>
          <p className="crumbs no-print">
            <Link to="/">Jobs</Link> /
          </p>
          <h1 id="job-title">
            {data.taskTypeSlug} <span className="mono small">{data.jobId}</span>
          </h1>
        </div>
        <div className="actions no-print">
          {data.status === 'completed' && (
            <button type="button" onClick={() => window.print()}>Download report (PDF)</button>
          )}
          {(data.status === 'queued' || data.status === 'waiting_for_finalize') && (
            <button type="button" onClick={() => cancel.mutate()} disabled={cancel.isPending}>Cancel job</button>
          )}
          {user!.permissions.includes('jobs:delete') && TERMINAL.has(data.status) && (
            <button type="button" className="danger" onClick={() => window.confirm('Delete this job and its files?') && remove.mutate()} disabled={remove.isPending}>
              Delete
            </button>
          )}
        </div>
      </div>
      <ErrorNote error={cancel.error ?? remove.error} />
      <dl className="facts">
        <div><dt>Status</dt><dd><StatusBadge status={data.status} /></dd></div>
        <div><dt>Cost</dt><dd>{data.cost} credits</dd></div>
        <div><dt>Created</dt><dd>{formatDate(data.createdAt)}</dd></div>
        <div><dt>Completed</dt><dd>{formatDate(data.completedAt)}</dd></div>
        <div><dt>Inputs</dt><dd>{data.inputs.map((input) => `${input.slotName}: ${input.fileName} (${formatBytes(input.sizeBytes)})`).join(', ')}</dd></div>
      </dl>
      {!TERMINAL.has(data.status) && (
        <p className="live" role="status" aria-live="polite">
          <span className="spinner" aria-hidden="true" /> {data.status === 'processing' ? 'Analysing…' : data.status === 'queued' ? 'Waiting for a worker…' : 'Waiting for the upload to be finalized…'} This page updates by itself.
        </p>
      )}
      {data.status === 'failed' && <p className="error" role="alert">The job failed: {data.errorMessage}</p>}
      {data.status === 'completed' && data.result && <ResultView job={data} />}
      <section aria-labelledby="artifacts-title" className="card">
        <h2 id="artifacts-title">Files</h2>
        <ul className="artifacts">
          {data.artifacts.map((artifact) => (
            <li key={artifact.id}>
              <a href={artifact.downloadUrl} target="_blank" rel="noreferrer">{artifact.id}</a> <span className="muted">{artifact.kind} · {artifact.contentType} · {formatBytes(artifact.sizeBytes)}</span>
            </li>
          ))}
        </ul>
      </section>
      {data.result && (
        <details className="card raw no-print">
          <summary>Raw result JSON</summary>
          <pre>{JSON.stringify(data.result, null, 2)}</pre>
        </details>
      )}
    </article>
  );
}
