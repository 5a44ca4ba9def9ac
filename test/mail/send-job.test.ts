import { MAIL_QUEUE } from '#core/mail/send-job.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, PASSWORD, signUp, tokenOf, uniqueEmail } from '../internal/accounts-support.ts';
import { initTestApp, type TestApp } from '../support/app.ts';
import { freePort, type SmtpInbox, startSmtpInbox } from './smtp-inbox.ts';
import { captureLog, MAIL_FROM, type MailApp, SENDER, startMailApp, startMailWorkers, waitForJob } from './support.ts';

describe('mail over SMTP, configured by SMTP_URL and MAIL_FROM', () => {
  let t: TestApp;
  let smtp: SmtpInbox;
  let mail: MailApp;
  const log = captureLog();

  beforeAll(async () => {
    mail = await startMailApp({}, log);
    ({ t, smtp } = mail);
  });
  afterAll(() => mail?.close());

  it('delivers an invitation with its recipient, sender, subject and link, logging neither the link nor the credentials', async () => {
    const owner = await signUp(t);
    const email = uniqueEmail('invitee');
    await client(t, owner.token).accounts.invite.mutate({ email, role: 'member' });
    const mail = await smtp.next(email);
    expect(mail).toMatchObject({
      envelope: { from: SENDER, to: [email] },
      from: [{ address: SENDER, name: 'Leadwire Accounts' }],
      to: email,
      subject: `You are invited to Org of ${owner.email} on Leadwire`,
      template: 'invite',
    });
    expect(mail.link).toMatch(/^https:\/\/app\.leadwire\.test\/accept-invite\?token=lwi_[0-9A-Za-z]{43}$/);
    expect(mail.text).toContain('within 7 days');
    expect(smtp.refusedLogins).toBe(0);

    const job = await waitForJob(t, MAIL_QUEUE, (j) => j.data.to === email && j.state === 'completed');
    expect(job.retry_count).toBe(0);
    const logged = log.lines.join('\n');
    expect(logged).toContain('email sent');
    expect(logged).not.toContain(tokenOf(mail.link));
    expect(logged).not.toContain(smtp.pass);
  });

  it('queues the email in the same transaction as the token: when that transaction fails at commit, no email is queued', async () => {
    const owner = await signUp(t);
    const doomed = uniqueEmail('doomed');
    // A deferred constraint trigger fails the invitation's transaction at COMMIT, after the email was queued in it.
    await t.sql(`create function refuse_doomed() returns trigger language plpgsql as $$
      begin if new.email like 'doomed%' then raise exception 'refused at commit'; end if; return new; end $$`);
    await t.sql(`create constraint trigger refuse_doomed after insert on invites deferrable initially deferred
      for each row execute function refuse_doomed()`);
    try {
      await expect(client(t, owner.token).accounts.invite.mutate({ email: doomed, role: 'member' })).rejects.toThrow();
    } finally {
      await t.sql('drop trigger refuse_doomed on invites');
      await t.sql('drop function refuse_doomed');
    }
    expect(await t.sql(`select 1 from pgboss.job where name = ? and data->>'to' = ?`, [MAIL_QUEUE, doomed])).toEqual([]);
    expect(await t.sql('select 1 from invites where email = ?', [doomed])).toEqual([]);
  });
});

describe('while the SMTP server is down', () => {
  let t: TestApp;
  let smtp: SmtpInbox | undefined;
  let port: number;
  const log = captureLog();
  const password = 'smtp-password-that-must-stay-secret';

  beforeAll(async () => {
    port = await freePort();
    t = await initTestApp({ APP_URL: 'https://app.leadwire.test', SMTP_URL: `smtp://leadwire:${password}@127.0.0.1:${port}`, MAIL_FROM });
    await startMailWorkers(t, log);
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('the job fails, is retried later, logs only the failure\u2019s code, and delivers once the server is back', async () => {
    const owner = await signUp(t);
    await client(t).accounts.requestPasswordReset.mutate({ email: owner.email });
    const failed = await waitForJob(t, MAIL_QUEUE, (j) => j.data.to === owner.email && j.state === 'retry');
    // The first attempt failed; the retry waits its delay (10-20 s for the first), it does not spin.
    expect(failed.retry_count).toBe(0);
    expect(new Date(failed.start_after).getTime() - Date.now()).toBeGreaterThan(5_000);
    const token = tokenOf(String(failed.data.link));
    expect(token).toMatch(/^lwr_/);

    const logged = log.lines.join('\n');
    expect(log.lines.filter((l) => l.includes('sending an email failed'))).toEqual([
      JSON.stringify({ template: 'password_reset', code: 'ESOCKET', msg: 'sending an email failed; it will be retried' }),
    ]);
    expect(logged).not.toContain(token);
    expect(logged).not.toContain(password);
    // What pg-boss stores of the failure holds no credentials either.
    expect(JSON.stringify(failed.output)).not.toContain(password);
    expect(failed.output).toMatchObject({ name: 'MailDeliveryError', message: 'SMTP delivery failed: ESOCKET' });

    // The server comes back with these credentials; the retry is brought forward instead of waited for.
    smtp = await startSmtpInbox({ port, user: 'leadwire', pass: password });
    await t.runtime.boss.boss.update(MAIL_QUEUE, undefined, { id: failed.id, startAfter: new Date() });
    const mail = await smtp.next(owner.email);
    expect(tokenOf(mail.link)).toBe(token);
    await client(t).accounts.resetPassword.mutate({ token, newPassword: 'a new password after the outage' });
    expect((await client(t).accounts.signIn.mutate({ email: owner.email, password: 'a new password after the outage' })).user.id).toBe(
      owner.userId,
    );
    await expect(client(t).accounts.signIn.mutate({ email: owner.email, password: PASSWORD })).rejects.toThrow();
  });
});
