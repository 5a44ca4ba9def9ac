import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** Things that arrive over time; `take` resolves with the first match, already here or yet to come. No timers. */
export class Arrivals<T> {
  private readonly items: T[] = [];
  private readonly waiting: { match: (item: T) => boolean; resolve: (item: T) => void }[] = [];

  push(item: T): void {
    const i = this.waiting.findIndex((w) => w.match(item));
    if (i >= 0) this.waiting.splice(i, 1)[0]!.resolve(item);
    else this.items.push(item);
  }

  take(match: (item: T) => boolean): Promise<T> {
    const i = this.items.findIndex(match);
    if (i >= 0) return Promise.resolve(this.items.splice(i, 1)[0]!);
    return new Promise((resolve) => this.waiting.push({ match, resolve }));
  }

  /** Arrived and not yet taken. */
  get pending(): readonly T[] {
    return this.items;
  }
}

/** One email as a real SMTP server received it, parsed as a mail client would. */
export interface ReceivedMail {
  /** SMTP envelope: MAIL FROM and RCPT TO. */
  envelope: { from: string; to: string[] };
  /** The From and To headers as mailparser reads them: `[{ address, name }]`. */
  from: { address?: string; name: string }[];
  to: string;
  subject: string;
  text: string;
  template: string | undefined;
  /** The first http(s) URL of the text: the action the email exists for. */
  link: string;
  /** The message as it went over the wire. */
  raw: string;
}

export interface SmtpInbox {
  port: number;
  user: string;
  pass: string;
  /** `smtp://user:pass@127.0.0.1:port`, for SMTP_URL. */
  url: string;
  received: Arrivals<ReceivedMail>;
  /** The next email to `to` (or one that came and was not taken yet). */
  next(to: string): Promise<ReceivedMail>;
  /** AUTH attempts refused for bad credentials. */
  refusedLogins: number;
  close(): Promise<void>;
}

/** A port nothing listens on right now: for an SMTP server that is down, and later comes up there. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (typeof address !== 'object' || !address) throw new Error('no port');
  return address.port;
}

/**
 * A real SMTP server (nodemailer's smtp-server) on loopback that requires a login, the way a relay does. STARTTLS is
 * off because the test has no certificate a client would trust; AUTH over plain text is allowed for the same reason.
 */
export async function startSmtpInbox(opts: { port?: number; user?: string; pass?: string } = {}): Promise<SmtpInbox> {
  const user = opts.user ?? 'leadwire';
  const pass = opts.pass ?? `smtp-secret-${randomBytes(9).toString('hex')}`;
  const received = new Arrivals<ReceivedMail>();
  const inbox = { refusedLogins: 0 };
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: false,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === user && auth.password === pass) return callback(null, { user });
      inbox.refusedLogins++;
      return callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        simpleParser(raw).then(
          (parsed) => {
            const text = parsed.text ?? '';
            const header = parsed.headers.get('x-leadwire-template');
            received.push({
              envelope: {
                from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
                to: session.envelope.rcptTo.map((r) => r.address),
              },
              from: parsed.from?.value.map((a) => ({ address: a.address, name: a.name })) ?? [],
              to: parsed.to && !Array.isArray(parsed.to) ? parsed.to.text : '',
              subject: parsed.subject ?? '',
              text,
              template: typeof header === 'string' ? header : undefined,
              link: /https?:\/\/\S+/.exec(text)?.[0] ?? '',
              raw,
            });
            callback();
          },
          (err: unknown) => callback(err instanceof Error ? err : new Error(String(err))),
        );
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    user,
    pass,
    url: `smtp://${user}:${pass}@127.0.0.1:${port}`,
    received,
    next: (to) => received.take((m) => m.envelope.to.includes(to)),
    get refusedLogins() {
      return inbox.refusedLogins;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
