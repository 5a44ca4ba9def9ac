import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Notice } from '../ui/common.tsx';
import { Form, FormProblem, Submit, TextInput } from '../ui/form.tsx';
import { useAction } from '../ui/use-load.ts';

type Mode = 'sign-in' | 'sign-up' | 'reset';

const TITLES: Record<Mode, string> = {
  'sign-in': 'Sign in to Leadwire',
  'sign-up': 'Create a workspace',
  reset: 'Reset your password',
};

/** Sign in, create a workspace, or ask for a reset link: the one screen a signed-out visitor sees. */
export function SignIn(props: { notice?: string | undefined; onSignedIn: () => void }) {
  const [mode, setMode] = useState<Mode>('sign-in');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [organizationName, setOrganizationName] = useState('');
  const [sent, setSent] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${mode === 'sign-in' ? 'Sign in' : TITLES[mode]} · Leadwire`;
    heading.current?.focus();
  }, [mode]);

  const submit = useAction(async () => {
    if (mode === 'sign-in') await api.accounts.signIn.mutate({ email, password });
    else if (mode === 'sign-up') await api.accounts.signUp.mutate({ email, password, organizationName });
    else {
      await api.accounts.requestPasswordReset.mutate({ email });
      setSent(true);
      return;
    }
    props.onSignedIn();
  });
  const fields = submit.problem?.fields ?? {};
  const switchTo = (next: Mode) => {
    submit.clear();
    setSent(false);
    setMode(next);
  };

  return (
    <main id="main" class="sign-in">
      <h1 tabIndex={-1} ref={heading}>
        {TITLES[mode]}
      </h1>
      {props.notice && mode === 'sign-in' && <Notice>{props.notice}</Notice>}
      <Form onSubmit={submit.run} label={TITLES[mode]}>
        <FormProblem problem={submit.problem} fields={['email', 'password', 'organizationName']} />
        {mode === 'sign-up' && (
          <TextInput
            label="Workspace name"
            hint="Your company or team; you can invite others once it exists."
            value={organizationName}
            onValue={setOrganizationName}
            error={fields.organizationName}
            autoComplete="organization"
            required
          />
        )}
        <TextInput label="Email" type="email" value={email} onValue={setEmail} error={fields.email} autoComplete="email" required />
        {mode !== 'reset' && (
          <TextInput
            label="Password"
            type="password"
            hint={mode === 'sign-up' ? 'At least 8 characters.' : undefined}
            value={password}
            onValue={setPassword}
            error={fields.password}
            autoComplete={mode === 'sign-up' ? 'new-password' : 'current-password'}
            required
          />
        )}
        {sent && <Notice>If an account uses {email}, a reset link is on its way. It works for one hour.</Notice>}
        <Submit busy={submit.busy}>
          {mode === 'sign-in' ? 'Sign in' : mode === 'sign-up' ? 'Create workspace' : 'Email me a reset link'}
        </Submit>
      </Form>
      <p class="switch">
        {mode !== 'sign-in' && (
          <button type="button" class="link" onClick={() => switchTo('sign-in')}>
            Back to sign in
          </button>
        )}
        {mode === 'sign-in' && (
          <>
            <button type="button" class="link" onClick={() => switchTo('sign-up')}>
              Create a workspace
            </button>
            <button type="button" class="link" onClick={() => switchTo('reset')}>
              Forgot your password?
            </button>
          </>
        )}
      </p>
    </main>
  );
}
