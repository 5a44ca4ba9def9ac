import http from 'node:http';

/**
 * The bare servers' shared shell: a `node:http` server that hands each request's body to `handle` and answers its
 * result as JSON (a failure as 500 with `codeOf(err)`), prints `listening <port>` for the bench, and on SIGTERM
 * closes its connections and runs `close` before it exits.
 */
export function serve(
  handle: (req: http.IncomingMessage, body: string) => Promise<unknown>,
  codeOf: (err: unknown) => string,
  close: () => Promise<unknown>,
): void {
  const answer = (res: http.ServerResponse, status: number, value: unknown) => {
    const body = JSON.stringify(value);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      handle(req, Buffer.concat(chunks).toString('utf8')).then(
        (value) => answer(res, 200, value),
        (err: unknown) => answer(res, 500, { error: err instanceof Error ? err.message : String(err), code: codeOf(err) }),
      );
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const addr = server.address();
    process.stdout.write(`listening ${addr && typeof addr === 'object' ? addr.port : 0}\n`);
  });
  process.once('SIGTERM', () => {
    server.close();
    server.closeAllConnections();
    void close().finally(() => process.exit(0));
  });
}
