import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { consoleApi, formatDate, type Tenant } from '../api';
import { ErrorNote } from '../components';

/** Operators: every tenant with its balance, and credit grants. */
export function TenantsPage() {
  const tenants = useQuery({ queryKey: ['tenants'], queryFn: () => consoleApi<{ data: Tenant[] }>('/tenants') });
  return (
    <section aria-labelledby="tenants-title">
      <h1 id="tenants-title">Tenants</h1>
      <ErrorNote error={tenants.error} />
      <div className="table-wrap">
        <table>
          <thead>
            <tr><th scope="col">Tenant</th><th scope="col">Balance</th><th scope="col">Reserved</th><th scope="col">Billing</th><th scope="col">Created</th><th scope="col">Grant credits</th></tr>
          </thead>
          <tbody>
            {tenants.data?.data.map((tenant) => (
              <tr key={tenant.id}>
                <td>{tenant.name}<br /><span className="mono muted small">{tenant.id}</span></td>
                <td className="num">{tenant.balance}</td>
                <td className="num">{tenant.reserved}</td>
                <td>{tenant.payAsYouGo ? 'pay as you go' : 'prepaid'}</td>
                <td>{formatDate(tenant.createdAt)}</td>
                <td><GrantForm tenant={tenant} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function GrantForm({ tenant }: { tenant: Tenant }) {
  const queryClient = useQueryClient();
  const [amount, setAmount] = useState('');
  const grant = useMutation({
    mutationFn: () => consoleApi(`/tenants/${encodeURIComponent(tenant.id)}/credits`, { method: 'POST', body: { amount: Number(amount) } }),
    onSuccess: () => {
      setAmount('');
      void queryClient.invalidateQueries({ queryKey: ['tenants'] });
      void queryClient.invalidateQueries({ queryKey: ['credits'] });
    },
  });
  return (
    <form
      className="inline-form"
      onSubmit={(event) => {
        event.preventDefault();
        grant.mutate();
      }}
    >
      <label className="visually-hidden" htmlFor={`grant-${tenant.id}`}>Credits to grant to {tenant.name}</label>
      <input id={`grant-${tenant.id}`} type="number" step={1} required value={amount} onChange={(e) => setAmount(e.target.value)} placeholder="+100" />
      <button type="submit" disabled={grant.isPending || !Number.isInteger(Number(amount)) || amount === ''}>Grant</button>
      <ErrorNote error={grant.error} />
    </form>
  );
}
