import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { consoleApi, formatDate, type ApiKey, type MediaClient } from '../api';
import { ErrorNote } from '../components';

const KEY_PERMISSIONS = ['jobs:read', 'jobs:write', 'jobs:delete', 'faces:read', 'faces:write', 'faces:delete'] as const;
const MEDIA_PERMISSIONS = ['media:read', 'media:write', 'media:delete'] as const;

/** A secret shown once, with a copy button; it is gone when dismissed. */
function ShownOnce({ label, value, onDone }: { label: string; value: string; onDone(): void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="card shown-once" role="alert">
      <p><strong>{label}</strong>: copy it now. It is shown only this once; the service keeps only its hash.</p>
      <div className="secret-row">
        <code data-testid="secret-value">{value}</code>
        <button type="button" onClick={() => void navigator.clipboard?.writeText(value).then(() => setCopied(true))}>{copied ? 'Copied' : 'Copy'}</button>
        <button type="button" onClick={onDone}>Done</button>
      </div>
    </div>
  );
}

function PermissionChoice({ all, chosen, onChange, note }: { all: readonly string[]; chosen: Set<string>; onChange(next: Set<string>): void; note: string }) {
  return (
    <fieldset>
      <legend>Permissions</legend>
      {all.map((permission) => (
        <label key={permission} className="inline">
          <input
            type="checkbox"
            checked={chosen.has(permission)}
            onChange={(e) => {
              const next = new Set(chosen);
              if (e.target.checked) next.add(permission);
              else next.delete(permission);
              onChange(next);
            }}
          />
          {permission}
        </label>
      ))}
      <p className="muted small">{note}</p>
    </fieldset>
  );
}

export function KeysPage() {
  return (
    <section aria-labelledby="settings-title">
      <h1 id="settings-title">Settings</h1>
      <ApiKeys />
      <MediaClients />
    </section>
  );
}

function ApiKeys() {
  const queryClient = useQueryClient();
  const keys = useQuery({ queryKey: ['keys'], queryFn: () => consoleApi<{ data: ApiKey[] }>('/keys') });
  const [name, setName] = useState('');
  const [permissions, setPermissions] = useState(new Set<string>(['jobs:read', 'jobs:write']));
  const [created, setCreated] = useState<string | null>(null);
  const create = useMutation({
    mutationFn: () => consoleApi<{ key: string }>('/keys', { method: 'POST', body: { name, permissions: [...permissions] } }),
    onSuccess: ({ key }) => {
      setCreated(key);
      setName('');
      void queryClient.invalidateQueries({ queryKey: ['keys'] });
    },
  });
  const revoke = useMutation({
    mutationFn: (keyId: string) => consoleApi(`/keys/${encodeURIComponent(keyId)}`, { method: 'DELETE' }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['keys'] }),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <section className="card" aria-labelledby="keys-title">
      <h2 id="keys-title">API Keys</h2>
      {created && <ShownOnce label="Your new API key" value={created} onDone={() => setCreated(null)} />}
      <form onSubmit={submit} className="create-form">
        <label>
          Name
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={100} placeholder="e.g. onboarding backend" />
        </label>
        <PermissionChoice all={KEY_PERMISSIONS} chosen={permissions} onChange={setPermissions} note="jobs:delete and faces:delete let the key delete jobs, files and enrolled faces; give them only where that is needed." />
        <button type="submit" className="primary" disabled={create.isPending || permissions.size === 0}>Create key</button>
      </form>
      <ErrorNote error={create.error ?? revoke.error ?? keys.error} />
      <div className="table-wrap">
        <table>
          <thead>
            <tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Permissions</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr>
          </thead>
          <tbody>
            {keys.data?.data.map((key) => (
              <tr key={key.keyId} className={key.revokedAt ? 'revoked' : ''}>
                <td>{key.name}</td>
                <td className="mono">{key.prefix}…</td>
                <td>{key.permissions.join(', ')}</td>
                <td>{formatDate(key.createdAt)}</td>
                <td>{formatDate(key.lastUsedAt)}</td>
                <td>
                  {key.revokedAt ? (
                    <span className="muted">revoked {formatDate(key.revokedAt)}</span>
                  ) : (
                    <RevokeButton label={`Revoke key ${key.name}`} onConfirm={() => revoke.mutate(key.keyId)} />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** Revocation cannot be undone: a second click confirms it. */
function RevokeButton({ label, onConfirm }: { label: string; onConfirm(): void }) {
  const [asking, setAsking] = useState(false);
  if (!asking) return <button type="button" className="danger" onClick={() => setAsking(true)} aria-label={label}>Revoke</button>;
  return (
    <span className="confirm">
      <button type="button" className="danger" onClick={onConfirm}>Confirm revoke</button>
      <button type="button" onClick={() => setAsking(false)}>Keep</button>
    </span>
  );
}

function MediaClients() {
  const queryClient = useQueryClient();
  const clients = useQuery({ queryKey: ['clients'], queryFn: () => consoleApi<{ data: MediaClient[] }>('/clients') });
  const [permissions, setPermissions] = useState(new Set<string>(['media:read', 'media:write']));
  const [created, setCreated] = useState<{ clientId: string; clientSecret: string } | null>(null);
  const create = useMutation({
    mutationFn: () => consoleApi<{ clientId: string; clientSecret: string }>('/clients', { method: 'POST', body: { permissions: [...permissions] } }),
    onSuccess: (value) => {
      setCreated(value);
      void queryClient.invalidateQueries({ queryKey: ['clients'] });
    },
  });
  const revoke = useMutation({
    mutationFn: (clientId: string) => consoleApi(`/clients/${encodeURIComponent(clientId)}`, { method: 'DELETE' }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['clients'] }),
  });
  return (
    <section className="card" aria-labelledby="clients-title">
      <h2 id="clients-title">Media-API clients</h2>
      {created && <ShownOnce label={`Secret of client ${created.clientId}`} value={created.clientSecret} onDone={() => setCreated(null)} />}
      <form
        className="create-form"
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate();
        }}
      >
        <PermissionChoice all={MEDIA_PERMISSIONS} chosen={permissions} onChange={setPermissions} note="Clients call /api/media with x-client-id and x-client-secret." />
        <button type="submit" className="primary" disabled={create.isPending || permissions.size === 0}>Create client</button>
      </form>
      <ErrorNote error={create.error ?? revoke.error ?? clients.error} />
      <div className="table-wrap">
        <table>
          <thead>
            <tr><th scope="col">Client id</th><th scope="col">Permissions</th><th scope="col">Quotas (query / mutation)</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr>
          </thead>
          <tbody>
            {clients.data?.data.map((c) => (
              <tr key={c.clientId} className={c.revokedAt ? 'revoked' : ''}>
                <td className="mono">{c.clientId}</td>
                <td>{c.permissions.join(', ')}</td>
                <td>{c.queryQuota ?? 'default'} / {c.mutationQuota ?? 'default'}</td>
                <td>{formatDate(c.createdAt)}</td>
                <td>{formatDate(c.lastUsedAt)}</td>
                <td>{c.revokedAt ? <span className="muted">revoked {formatDate(c.revokedAt)}</span> : <RevokeButton label={`Revoke client ${c.clientId}`} onConfirm={() => revoke.mutate(c.clientId)} />}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
