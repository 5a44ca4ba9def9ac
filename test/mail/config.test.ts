import { ConfigError, loadConfig } from '@leadwire/core';
import { createLogMailer, mailerFromConfig } from '#core/mail/mailer.ts';
import { describe, expect, it } from 'vitest';
import { captureLog } from './support.ts';

const SECRET = 'p4ss-w0rd-never-printed';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('expected the environment to be refused');
}

describe('SMTP_URL and MAIL_FROM', () => {
  it('are unset by default: no server, no sender, no secret', () => {
    const c = loadConfig({});
    expect(c.SMTP_URL).toBeUndefined();
    expect(c.MAIL_FROM).toBeUndefined();
  });

  it('accept smtp:// and smtps:// with credentials, and a sender with or without a name', () => {
    for (const url of [
      `smtp://user:${SECRET}@mail.example.com:587`,
      `smtps://user%40example.com:${SECRET}@mail.example.com`,
      'smtp://127.0.0.1:2525',
    ]) {
      expect(loadConfig({ SMTP_URL: url, MAIL_FROM: 'no-reply@example.com' }).SMTP_URL).toBe(url);
    }
    expect(loadConfig({ MAIL_FROM: 'Leadwire <no-reply@example.com>' }).MAIL_FROM).toBe('Leadwire <no-reply@example.com>');
  });

  it('refuse other schemes and malformed URLs without ever printing the value', () => {
    for (const url of [`http://user:${SECRET}@mail.example.com`, `smtp//user:${SECRET}@x`, `smtp://user:${SECRET}@`, SECRET]) {
      const problems = problemsOf({ SMTP_URL: url, MAIL_FROM: 'no-reply@example.com' });
      expect(problems).toEqual(['SMTP_URL: must be an smtp:// or smtps:// URL with a host']);
      expect(problems.join('\n')).not.toContain(SECRET);
    }
  });

  it('need a sender once a server is set, and refuse a sender that is not an address (or smuggles a header)', () => {
    expect(problemsOf({ SMTP_URL: 'smtp://127.0.0.1:2525' })).toEqual(['MAIL_FROM: is required when SMTP_URL is set']);
    for (const from of [
      'Leadwire',
      'no-reply',
      'Leadwire <no-reply>',
      'a@example.com\r\nBcc: x@evil.test',
      'A <a@example.com>\nBcc: x@evil.test',
    ]) {
      expect(problemsOf({ MAIL_FROM: from })).toEqual(['MAIL_FROM: must be an address, e.g. Leadwire <no-reply@example.com>']);
    }
  });
});

describe('mailerFromConfig', () => {
  it('without SMTP_URL writes emails to the log, and warns once that it does', async () => {
    const log = captureLog();
    const mailer = mailerFromConfig(loadConfig({}), log);
    expect(log.lines).toEqual([
      JSON.stringify({ msg: 'SMTP_URL is not set: emails are not sent, they are written to this log with their links' }),
    ]);
    await mailer.send({
      to: 'a@example.com',
      subject: 'S',
      text: 'body',
      template: 'invite',
      link: 'https://x/accept-invite?token=lwi_abc',
    });
    expect(log.lines[1]).toContain('https://x/accept-invite?token=lwi_abc');
    expect(typeof createLogMailer(log).send).toBe('function');
  });

  it('with SMTP_URL logs nothing when built', () => {
    const log = captureLog();
    mailerFromConfig(loadConfig({ SMTP_URL: `smtp://user:${SECRET}@127.0.0.1:2525`, MAIL_FROM: 'a@example.com' }), log);
    expect(log.lines).toEqual([]);
  });
});
