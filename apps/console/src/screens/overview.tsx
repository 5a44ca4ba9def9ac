import { isManager, type ScreenProps } from '../screen.ts';
import { Link, Page } from '../ui/common.tsx';

/** Where a new workspace starts: the integration side in the order people set it up. */
export function Overview({ me }: ScreenProps) {
  const manager = isManager(me);
  return (
    <Page title="Overview" intro={`Signed in as ${me.name ?? me.email}. Connect your website, your partners and your tools to Leadwire.`}>
      <ol class="steps">
        <li>
          <h2>Call the API</h2>
          <p>
            Create an API key in <Link to="/keys">API keys</Link>: a Public key for websites and partners, an Internal key for your own
            tools.
          </p>
        </li>
        {manager && (
          <li>
            <h2>Receive events</h2>
            <p>
              Add an endpoint in <Link to="/webhooks">Webhooks</Link>, send it a test, and watch every attempt in its delivery log.
            </p>
          </li>
        )}
        <li>
          <h2>Capture leads</h2>
          <p>
            Build a form in <Link to="/forms">Forms</Link> and share its hosted page, or paste the snippets from{' '}
            <Link to="/website">Website</Link> into your site.
          </p>
        </li>
      </ol>
    </Page>
  );
}
