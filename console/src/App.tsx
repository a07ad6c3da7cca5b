import { useEffect, useState } from 'react';
import { NavLink, Route, Routes } from 'react-router-dom';
import { useAuth } from './auth';
import { JobsPage } from './pages/JobsPage';
import { JobPage } from './pages/JobPage';
import { AnalyzePage } from './pages/AnalyzePage';
import { KeysPage } from './pages/KeysPage';
import { CreditsPage } from './pages/CreditsPage';
import { TenantsPage } from './pages/TenantsPage';

type Theme = 'light' | 'dark';

function useTheme(): [Theme, () => void] {
  const [theme, setTheme] = useState<Theme>(() => (localStorage.getItem('mediaproof-theme') as Theme | null) ?? (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'));
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
    localStorage.setItem('mediaproof-theme', theme);
  }, [theme]);
  return [theme, () => setTheme((current) => (current === 'dark' ? 'light' : 'dark'))];
}

export function App() {
  const { user, signOut } = useAuth();
  const [theme, toggleTheme] = useTheme();
  const isAdmin = user!.role !== 'member';
  return (
    <div className="layout">
      <a className="skip-link" href="#main">Skip to content</a>
      <header className="topbar">
        <span className="brand">
          <span className="brand-mark" aria-hidden="true">◆</span> mediaproof
        </span>
        <nav aria-label="Main">
          <NavLink to="/" end>Jobs</NavLink>
          <NavLink to="/analyze">Analyze</NavLink>
          <NavLink to="/credits">Credits</NavLink>
          {isAdmin && <NavLink to="/settings/api-keys">Settings</NavLink>}
          {user!.role === 'operator' && <NavLink to="/tenants">Tenants</NavLink>}
        </nav>
        <div className="account">
          <button type="button" className="ghost" onClick={toggleTheme} aria-label={`Switch to ${theme === 'dark' ? 'light' : 'dark'} theme`}>
            {theme === 'dark' ? '☀' : '☾'}
          </button>
          <span className="who" title={user!.tenant.id}>
            {user!.email} · {user!.tenant.name} · {user!.role}
          </span>
          <button type="button" onClick={() => void signOut()}>Sign out</button>
        </div>
      </header>
      <main id="main">
        <Routes>
          <Route path="/" element={<JobsPage />} />
          <Route path="/jobs/:jobId" element={<JobPage />} />
          <Route path="/analyze" element={<AnalyzePage />} />
          <Route path="/credits" element={<CreditsPage />} />
          <Route path="/settings/api-keys" element={isAdmin ? <KeysPage /> : <Forbidden />} />
          <Route path="/tenants" element={user!.role === 'operator' ? <TenantsPage /> : <Forbidden />} />
          <Route path="*" element={<p>No such page.</p>} />
        </Routes>
      </main>
    </div>
  );
}

function Forbidden() {
  return <p role="alert">This page needs the admin role.</p>;
}
