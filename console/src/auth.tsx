/** The signed-in user, and the sign-in form shown over the page whenever the session is gone. */
import { createContext, useContext, useEffect, useState, type FormEvent, type ReactNode } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { consoleApi, errorMessage, SIGNED_OUT_EVENT, type ConsoleUser } from './api';

interface Auth {
  user: ConsoleUser | null;
  signOut(): Promise<void>;
}

const AuthContext = createContext<Auth | null>(null);

export function useAuth(): Auth {
  const auth = useContext(AuthContext);
  if (!auth) throw new Error('useAuth outside AuthProvider');
  return auth;
}

export function AuthProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [user, setUser] = useState<ConsoleUser | null>(null);
  const [checked, setChecked] = useState(false);
  const [expired, setExpired] = useState(false);

  useEffect(() => {
    consoleApi<ConsoleUser>('/session')
      .then(setUser, () => setUser(null))
      .finally(() => setChecked(true));
    // The user stays known (the page below keeps rendering); only the session is gone.
    const onSignedOut = () => setExpired(true);
    window.addEventListener(SIGNED_OUT_EVENT, onSignedOut);
    return () => window.removeEventListener(SIGNED_OUT_EVENT, onSignedOut);
  }, []);

  const signedIn = (next: ConsoleUser) => {
    // Another account signing in must not see the previous one's cached pages.
    if (user && next.tenant.id !== user.tenant.id) queryClient.clear();
    setUser(next);
    setExpired(false);
    // What failed while signed out is fetched again; the page itself was never unmounted.
    void queryClient.invalidateQueries();
  };

  const signOut = async () => {
    await consoleApi('/session', { method: 'DELETE' }).catch(() => {});
    queryClient.clear();
    setExpired(false);
    setUser(null);
  };

  if (!checked) return <p className="loading" role="status">Loading…</p>;
  return (
    <AuthContext.Provider value={{ user, signOut }}>
      {/* The same element before and after the session ends, so the page below keeps its state. */}
      {user && (
        <div className="app-root" inert={expired} aria-hidden={expired}>
          {children}
        </div>
      )}
      {(!user || expired) && <SignIn onSignedIn={signedIn} notice={user ? 'Your session has ended. Sign in again to carry on where you were.' : undefined} overlay={Boolean(user)} />}
    </AuthContext.Provider>
  );
}

function SignIn({ onSignedIn, notice, overlay }: { onSignedIn(user: ConsoleUser): void; notice?: string; overlay?: boolean }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await consoleApi<ConsoleUser>('/session', { method: 'POST', body: { email, password } }));
    } catch (caught) {
      setError(errorMessage(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className={overlay ? 'sign-in overlay' : 'sign-in'}>
      <form className="card sign-in-card" onSubmit={submit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">
          <span className="brand-mark" aria-hidden="true">◆</span> mediaproof
        </h1>
        {notice && <p className="notice" role="status">{notice}</p>}
        <label>
          Email
          <input type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} autoFocus />
        </label>
        <label>
          Password
          <input type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
        {error && <p className="error" role="alert">{error}</p>}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </div>
  );
}
