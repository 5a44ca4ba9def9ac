// A real HTTP server speaking just enough of the OpenAI chat-completions protocol
// for the adjuster tests, so they exercise fetch, headers, timeouts and sockets
// rather than a mocked fetch.
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatRequestBody {
  model?: unknown;
  temperature?: unknown;
  response_format?: unknown;
  messages: { role: string; content: string }[];
}

export interface RecordedRequest {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingMessage['headers'];
  rawBody: string;
  /** Undefined when the body was not JSON. */
  body: ChatRequestBody | undefined;
}

export type StubHandler = (req: RecordedRequest, res: ServerResponse) => void;

export interface OpenAiStub {
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  requests: RecordedRequest[];
  handler: StubHandler;
  close(): Promise<void>;
}

export function completion(content: string | null, model = 'stub-model'): string {
  return JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    model,
    choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
  });
}

export function replyJson(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(body);
}

/** A handler answering `{"adjustment": <adjustment>, "reason": ...}`. */
export function answer(adjustment: unknown): StubHandler {
  return (_req, res) => replyJson(res, 200, completion(JSON.stringify({ adjustment, reason: 'because' })));
}

export async function startOpenAiStub(): Promise<OpenAiStub> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: ChatRequestBody | undefined;
      try {
        body = JSON.parse(rawBody) as ChatRequestBody;
      } catch {
        // Left undefined; assertions on `body` will say so.
      }
      const recorded: RecordedRequest = { method: req.method, url: req.url, headers: req.headers, rawBody, body };
      stub.requests.push(recorded);
      stub.handler(recorded, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const stub: OpenAiStub = {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests: [],
    handler: answer(0),
    async close() {
      // Timeout tests leave requests hanging on purpose; drop them so close() returns.
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    },
  };
  return stub;
}

/** A loopback URL nothing listens on: bind a port, then release it. */
export async function unusedBaseUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}
