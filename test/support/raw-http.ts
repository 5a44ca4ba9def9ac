import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The JSON body, or undefined when it is not JSON. */
  json: any;
  /** Whether the server closed the connection after answering. */
  closed: boolean;
}

/** Parses one HTTP/1.1 response (Content-Length bodies only, which is all Leadwire's errors use). */
export function parseResponse(raw: string, closed: boolean): RawResponse | undefined {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine = '', ...lines] = raw.slice(0, end).split('\r\n');
  const headers = Object.fromEntries(
    lines.map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  const length = Number(headers['content-length'] ?? 0);
  const body = raw.slice(end + 4, end + 4 + length);
  if (Buffer.byteLength(body) < length) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    json = undefined;
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body, json, closed };
}

/**
 * A raw TCP client for requests fetch() cannot make: oversized or invalid heads, bytes dribbled slowly, connections
 * held open. Everything it opens is destroyed by `close()`.
 */
export class RawClient {
  readonly socket: net.Socket;
  private data = '';
  private ended = false;
  private readonly waiters = new Set<() => void>();

  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      this.data += d;
      this.wake();
    });
    socket.on('close', () => {
      this.ended = true;
      this.wake();
    });
    socket.on('error', () => {});
  }

  /** `from` binds the client's end to a local address: any of 127.0.0.0/8 on Linux, so one test can be many clients. */
  static connect(origin: string, from?: string): Promise<RawClient> {
    const { hostname, port } = new URL(origin);
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: hostname, port: Number(port), ...(from ? { localAddress: from } : {}) }, () =>
        resolve(new RawClient(socket)),
      );
      socket.once('error', reject);
    });
  }

  get closed(): boolean {
    return this.ended;
  }

  get received(): string {
    return this.data;
  }

  write(chunk: string): void {
    if (!this.socket.destroyed) this.socket.write(chunk);
  }

  /** Resolves once a whole response has arrived (or the connection closed without one: undefined). */
  async response(timeoutMs = 10_000): Promise<RawResponse | undefined> {
    await this.until(() => this.ended || parseResponse(this.data, false) !== undefined, timeoutMs);
    return parseResponse(this.data, this.ended);
  }

  /** Resolves once the server has closed the connection. */
  async closedByServer(timeoutMs = 10_000): Promise<void> {
    await this.until(() => this.ended, timeoutMs);
  }

  close(): void {
    this.socket.destroy();
  }

  private wake() {
    for (const w of this.waiters) w();
  }

  private until(done: () => boolean, timeoutMs: number): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!done()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`no answer in ${timeoutMs} ms; received so far: ${JSON.stringify(this.data.slice(0, 500))}`));
      }, timeoutMs);
      this.waiters.add(check);
    });
  }
}

/** Sends one raw request and reads its answer on a fresh connection. */
export async function rawRequest(origin: string, head: string, body = ''): Promise<RawResponse> {
  const client = await RawClient.connect(origin);
  try {
    client.write(head + body);
    const res = await client.response();
    if (!res) throw new Error(`connection closed without an answer; received ${JSON.stringify(client.received)}`);
    return res;
  } finally {
    client.close();
  }
}
