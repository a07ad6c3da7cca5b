import { useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router-dom';
import type { JobStatus } from '@mediaproof/sdk';
import { client, formatDate } from '../api';
import { ErrorNote, Pager, StatusBadge, TERMINAL, taskTypeName, useTaskTypes } from '../components';

const STATUSES: JobStatus[] = ['waiting_for_finalize', 'queued', 'processing', 'completed', 'failed', 'cancelled'];
const PAGE_SIZE = 20;

export function JobsPage() {
  // Filters live in the URL: a filtered list can be bookmarked and survives a reload.
  const [params, setParams] = useSearchParams();
  const page = Number(params.get('page') ?? 1) || 1;
  const status = (params.get('status') ?? '') as JobStatus | '';
  const taskTypeId = params.get('taskType') ? Number(params.get('taskType')) : undefined;
  const taskTypes = useTaskTypes();
  const jobs = useQuery({
    queryKey: ['jobs', page, status, taskTypeId],
    queryFn: () => client.jobs.list({ page, limit: PAGE_SIZE, status: status || undefined, taskTypeId }),
    // Live status: poll while any job on the page is still moving.
    refetchInterval: (query) => (query.state.data?.data.some((job) => !TERMINAL.has(job.status)) ? 2000 : 15_000),
  });
  const set = (name: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    if (name !== 'page') next.delete('page');
    setParams(next);
  };

  return (
    <section aria-labelledby="jobs-title">
      <div className="page-head">
        <h1 id="jobs-title">Jobs</h1>
        <Link className="button primary" to="/analyze">Analyze files</Link>
      </div>
      <div className="filters">
        <label>
          Status
          <select value={status} onChange={(e) => set('status', e.target.value)}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>{s.replaceAll('_', ' ')}</option>
            ))}
          </select>
        </label>
        <label>
          Task type
          <select value={taskTypeId ?? ''} onChange={(e) => set('taskType', e.target.value)}>
            <option value="">any</option>
            {taskTypes.data?.map((t) => (
              <option key={t.id} value={t.id}>{t.id} · {t.slug}</option>
            ))}
          </select>
        </label>
      </div>
      <ErrorNote error={jobs.error} />
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Job</th>
              <th scope="col">Task type</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {jobs.data?.data.map((job) => (
              <tr key={job.jobId}>
                <td>
                  <Link to={`/jobs/${job.jobId}`} className="mono">{job.jobId}</Link>
                </td>
                <td>{taskTypeName(taskTypes.data, job.taskTypeId)}</td>
                <td><StatusBadge status={job.status} /></td>
                <td>{formatDate(job.createdAt)}</td>
                <td>{formatDate(job.updatedAt)}</td>
              </tr>
            ))}
            {jobs.data && jobs.data.data.length === 0 && (
              <tr>
                <td colSpan={5} className="muted">No jobs{status || taskTypeId ? ' match these filters' : ' yet: analyze a file to start'}.</td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      {jobs.data && (
        <p className="muted">{jobs.data.pagination.total} jobs</p>
      )}
      {jobs.data && <Pager page={page} pages={jobs.data.pagination.pages} onPage={(p) => set('page', String(p))} />}
    </section>
  );
}
