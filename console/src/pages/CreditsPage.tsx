import { useMemo, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router-dom';
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { consoleApi, formatDate, type Credits } from '../api';
import { ErrorNote, Pager } from '../components';

const PALETTE = ['#3557d6', '#d6572f', '#2f9e6e', '#a04fd6', '#c9a227', '#2aa3b8', '#d63d7c', '#6b7a2f', '#7c5533', '#4f6bd6', '#888888'];

/** Spending per day, one stacked bar per task type. */
function useDailyUsage(usage: Credits['usage'] | undefined) {
  return useMemo(() => {
    const taskTypes = [...new Set((usage ?? []).map((row) => row.taskType ?? 'deleted jobs'))];
    const byDay = new Map<string, Record<string, number | string>>();
    for (const row of usage ?? []) {
      const day = byDay.get(row.day) ?? { day: row.day };
      const key = row.taskType ?? 'deleted jobs';
      day[key] = Number(day[key] ?? 0) + row.credits;
      byDay.set(row.day, day);
    }
    const perTaskType = taskTypes.map((taskType) => ({
      taskType,
      credits: (usage ?? []).filter((r) => (r.taskType ?? 'deleted jobs') === taskType).reduce((sum, r) => sum + r.credits, 0),
      jobs: (usage ?? []).filter((r) => (r.taskType ?? 'deleted jobs') === taskType).reduce((sum, r) => sum + r.jobs, 0),
    }));
    return { days: [...byDay.values()], taskTypes, perTaskType };
  }, [usage]);
}

export function CreditsPage() {
  const [page, setPage] = useState(1);
  const credits = useQuery({ queryKey: ['credits', page], queryFn: () => consoleApi<Credits>(`/credits?page=${page}&pageSize=20`), refetchInterval: 10_000 });
  const usage = useDailyUsage(credits.data?.usage);
  if (credits.error) return <ErrorNote error={credits.error} />;
  const data = credits.data;
  return (
    <section aria-labelledby="credits-title">
      <h1 id="credits-title">Credits</h1>
      {data && (
        <>
          <dl className="facts big">
            <div><dt>Balance</dt><dd data-testid="balance">{data.balance}</dd></div>
            <div><dt>Reserved by running jobs</dt><dd>{data.reserved}</dd></div>
            <div><dt>Billing</dt><dd>{data.payAsYouGo ? 'pay as you go' : 'prepaid'}</dd></div>
          </dl>
          <p className="muted">Credits are shared by the console and the API: a job costs the same whichever started it.</p>
          <section className="card" aria-labelledby="usage-title">
            <h2 id="usage-title">Spent in the last 30 days</h2>
            {usage.days.length === 0 ? (
              <p className="muted">Nothing spent yet.</p>
            ) : (
              <>
                <div className="chart" role="img" aria-label="Credits spent per day, stacked by task type">
                  <ResponsiveContainer width="100%" height={240}>
                    <BarChart data={usage.days}>
                      <CartesianGrid strokeDasharray="3 3" />
                      <XAxis dataKey="day" />
                      <YAxis allowDecimals={false} />
                      <Tooltip />
                      <Legend />
                      {usage.taskTypes.map((taskType, i) => (
                        <Bar key={taskType} dataKey={taskType} stackId="credits" fill={PALETTE[i % PALETTE.length]} isAnimationActive={false} />
                      ))}
                    </BarChart>
                  </ResponsiveContainer>
                </div>
                <table>
                  <thead><tr><th scope="col">Task type</th><th scope="col">Jobs</th><th scope="col">Credits</th></tr></thead>
                  <tbody>
                    {usage.perTaskType.map((row) => (
                      <tr key={row.taskType}><td>{row.taskType}</td><td>{row.jobs}</td><td>{row.credits}</td></tr>
                    ))}
                  </tbody>
                </table>
              </>
            )}
          </section>
          <section className="card" aria-labelledby="ledger-title">
            <h2 id="ledger-title">Ledger</h2>
            <div className="table-wrap">
              <table>
                <thead>
                  <tr><th scope="col">When</th><th scope="col">Entry</th><th scope="col">Balance change</th><th scope="col">Reserved change</th><th scope="col">Job</th><th scope="col">Note</th></tr>
                </thead>
                <tbody>
                  {data.ledger.items.map((entry) => (
                    <tr key={entry.id}>
                      <td>{formatDate(entry.createdAt)}</td>
                      <td><span className={`badge ledger-${entry.kind}`}>{entry.kind}</span></td>
                      <td className="num">{entry.amount > 0 ? `+${entry.amount}` : entry.amount}</td>
                      <td className="num">{entry.reservedDelta > 0 ? `+${entry.reservedDelta}` : entry.reservedDelta}</td>
                      <td>{entry.jobId ? <Link className="mono" to={`/jobs/${entry.jobId}`}>{entry.taskType ?? 'job'}</Link> : '—'}</td>
                      <td>{entry.note ?? ''}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager page={page} pages={Math.ceil(data.ledger.total / data.ledger.pageSize)} onPage={setPage} />
          </section>
        </>
      )}
    </section>
  );
}
