import { LocationProvider, Route, Router } from 'preact-iso/router';
import { useEffect, useState } from 'preact/hooks';
import { api, type Me, problemOf } from './api.ts';
import { BASE, href, useNavigate, usePath } from './router.ts';
import { mayOpen, ROUTES, type Route as ScreenRoute } from './routes.ts';
import { SignIn } from './screens/sign-in.tsx';
import { Link, ProblemLine } from './ui/common.tsx';
import { useAction } from './ui/use-load.ts';

type Session = { state: 'checking' } | { state: 'signed-out'; notice?: string } | { state: 'signed-in'; me: Me };

/** The console: who is signed in decides between the sign-in screen and the screens their role may open. */
export function App() {
  const [session, setSession] = useState<Session>({ state: 'checking' });
  const check = () =>
    api.me.query().then(
      (me) => setSession({ state: 'signed-in', me }),
      (err: unknown) => {
        const problem = problemOf(err);
        setSession({ state: 'signed-out', ...(problem.status === 401 ? {} : { notice: problem.message }) });
      },
    );
  useEffect(() => void check(), []);

  if (session.state === 'checking') return <p role="status">Loading Leadwire…</p>;
  if (session.state === 'signed-out') return <SignIn notice={session.notice} onSignedIn={() => void check()} />;
  return (
    <LocationProvider scope={BASE}>
      <Shell me={session.me} onSignedOut={(notice) => setSession({ state: 'signed-out', notice })} />
    </LocationProvider>
  );
}

function Shell({ me, onSignedOut }: { me: Me; onSignedOut: (notice: string) => void }) {
  const path = usePath();
  const navigate = useNavigate();
  const routes = ROUTES.filter((r) => mayOpen(r, me));
  const [menuOpen, setMenuOpen] = useState(false);
  // A move closes the folded menu, so the new screen is what a phone shows.
  useEffect(() => setMenuOpen(false), [path]);
  const signOut = useAction(async (all: boolean) => {
    await (all ? api.accounts.logOutAll.mutate() : api.accounts.signOut.mutate());
    navigate('/', { replace: true });
    onSignedOut(all ? 'You are signed out on every device, and the API keys you created no longer work.' : 'You are signed out.');
  });
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Leadwire</span>
        <span class="who">
          {me.email} <span class="role">({me.role})</span>
        </span>
        <button type="button" onClick={() => void signOut.run(false)} disabled={signOut.busy}>
          Sign out
        </button>
        <button type="button" onClick={() => void signOut.run(true)} disabled={signOut.busy}>
          Log out of all devices
        </button>
      </header>
      <nav aria-label="Console" class={menuOpen ? 'open' : undefined}>
        {/* Shown on narrow screens only (console.css): the navigation folds behind it. */}
        <button
          type="button"
          class="nav-toggle"
          aria-expanded={menuOpen}
          aria-controls="console-nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <ul id="console-nav">
          {routes
            .filter((r) => r.nav)
            .map((r) => (
              <li key={r.path}>
                <Link to={r.path} current={r.path === '/' ? path === '/' : path === r.path || path.startsWith(`${r.path}/`)}>
                  {r.nav}
                </Link>
              </li>
            ))}
        </ul>
      </nav>
      <main id="main">
        <ProblemLine problem={signOut.problem} />
        <Router>
          {[
            ...ROUTES.map((r) => <Route key={r.path} path={href(r.path)} component={Opened} route={r} me={me} />),
            <Route key="" default component={NotFound} />,
          ]}
        </Router>
      </main>
    </div>
  );
}

/** A route's screen, or why the signed-in role may not open it. */
function Opened({ route, me, params }: { route: ScreenRoute; me: Me; params: Record<string, string> }) {
  if (!mayOpen(route, me)) {
    return (
      <section class="page">
        <h1>Not available to your role</h1>
        <p>This screen is for {route.roles?.join(' and ')}s. Ask an owner of your workspace if you need it.</p>
      </section>
    );
  }
  const Screen = route.screen;
  return <Screen me={me} params={params} />;
}

function NotFound() {
  return (
    <section class="page">
      <h1>No such screen</h1>
      <p>
        The address does not name a screen of the console. <Link to="/">Go to the overview</Link>.
      </p>
    </section>
  );
}
