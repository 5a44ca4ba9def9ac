import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * What a careful front proxy does for the connections it holds (Apache's mod_reqtimeout, nginx, HAProxy), done by the
 * server itself because nothing may sit in front of it:
 * - a request body must keep up a minimum rate after a grace, and may not go quiet for long (answered 408);
 * - one client address holds a bounded number of connections;
 * - near the global cap, the connections that have sent the least are closed so that a newcomer still gets in.
 * Headers are bounded by Node's own headersTimeout, idle keep-alives by keepAliveTimeout.
 *
 * Bytes are read from `socket.bytesRead` on a periodic sweep, never from a `data` listener: Node's HTTP parser consumes
 * the socket natively, and the hot path stays as it was. Time is the monotonic clock, like Node's own time-outs, not
 * the Deps clock that tests move and freeze.
 */

export interface GuardLimits {
  /** Open connections above which the least-sending ones are closed; `maxConnections` or more turns it off. */
  shedAt: number;
  shedMinAgeMs: number;
  perAddress: number;
  /** False behind TRUST_PROXY: the client address is only known from a request's headers (see `claim`). */
  perAddressAtAccept: boolean;
  bodyGraceMs: number;
  /** Bytes per second a body must average after the grace; 0 turns the rule off. */
  bodyMinRate: number;
  bodyIdleMs: number;
}

export type CloseReason = 'refused' | 'body_timeout' | 'shed';

/** Closes a connection; `res` is the request's response when one is being received, to be answered if it can be. */
export type CloseConnection = (socket: Socket, res: ServerResponse | undefined, reason: CloseReason) => void;

interface Conn {
  socket: Socket;
  /** The address this connection is counted under: the socket's, or the forwarded client's once a request named it. */
  key: string;
  openedAt: number;
  req?: IncomingMessage;
  res?: ServerResponse;
  /** When the current body began, moved on by the time the server itself was not reading. */
  bodyStart: number;
  bodyBytesAt: number;
  seenBytes: number;
  lastByteAt: number;
}

/** `bodyStart` of a request whose body no sweep has looked at yet. */
const UNSEEN = -1;

/** Connections a well-behaved client is waiting on: its request is in, its answer not yet out. */
function beingAnswered(c: Conn): boolean {
  return c.req !== undefined && c.req.complete && c.res !== undefined && !c.res.writableFinished;
}

export class ConnectionGuard {
  private readonly conns = new Map<Socket, Conn>();
  private readonly perKey = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private readonly tick: number;
  private lastSweep: number;
  /** What the guard did since start, for the log. */
  readonly counts = { refused: 0, shed: 0, bodyTimeouts: 0 };

  private readonly limits: GuardLimits;
  private readonly close: CloseConnection;
  private readonly now: () => number;

  constructor(limits: GuardLimits, close: CloseConnection, now: () => number = () => performance.now()) {
    this.limits = limits;
    this.close = close;
    this.now = now;
    this.lastSweep = now();
    // A quarter of the shortest rule bounds how late a cut comes, as Node's connectionsCheckingInterval does for its own.
    this.tick = Math.max(
      10,
      Math.min(1_000, Math.floor(Math.min(limits.bodyGraceMs, limits.bodyIdleMs, limits.shedMinAgeMs || 1_000) / 4)),
    );
    this.timer = setInterval(() => this.sweep(), this.tick);
    this.timer.unref();
  }

  get open(): number {
    return this.conns.size;
  }

  /** A new connection: refused over its address's cap (when the address is the socket's), else tracked. */
  accept(socket: Socket): void {
    const key = socket.remoteAddress ?? '';
    if (this.limits.perAddressAtAccept && (this.perKey.get(key) ?? 0) >= this.limits.perAddress) {
      // Nothing was read yet, so there is no request to answer; closing now keeps the slot free.
      this.counts.refused++;
      this.close(socket, undefined, 'refused');
      return;
    }
    const at = this.now();
    const conn: Conn = { socket, key, openedAt: at, bodyStart: at, bodyBytesAt: 0, seenBytes: 0, lastByteAt: at };
    this.conns.set(socket, conn);
    this.count(key, 1);
    socket.once('close', () => this.forget(socket));
    if (this.conns.size > this.limits.shedAt) this.shed(this.conns.size - this.limits.shedAt, conn);
  }

  /**
   * A request's head has arrived. Its body, if still incomplete at the next sweep, is timed from there: at most one
   * tick of leniency, and no clock read on the path of every request.
   */
  request(req: IncomingMessage, res: ServerResponse): void {
    const conn = this.conns.get(req.socket);
    if (!conn) return;
    conn.req = req;
    conn.res = res;
    conn.bodyStart = UNSEEN;
  }

  /**
   * Behind a proxy: counts the connection under the client address its request was forwarded for. False when that
   * address now holds more connections than its cap; the caller refuses the request and closes the connection.
   */
  claim(socket: Socket, address: string): boolean {
    const conn = this.conns.get(socket);
    if (!conn) return true;
    if (conn.key !== address) {
      this.count(conn.key, -1);
      conn.key = address;
      this.count(address, 1);
    }
    if ((this.perKey.get(address) ?? 0) <= this.limits.perAddress) return true;
    this.counts.refused++;
    return false;
  }

  /** Applies the body rules to every connection, and sheds down to the high-water mark. */
  sweep(): void {
    const at = this.now();
    const elapsed = at - this.lastSweep;
    this.lastSweep = at;
    // A sweep this late means the event loop was blocked: no socket was read meanwhile, whatever the clients sent.
    const stalled = Math.max(0, elapsed - 2 * this.tick);
    const { bodyGraceMs, bodyMinRate, bodyIdleMs } = this.limits;
    for (const conn of this.conns.values()) {
      const bytes = conn.socket.bytesRead;
      if (bytes !== conn.seenBytes) {
        conn.seenBytes = bytes;
        conn.lastByteAt = at;
      }
      if (!conn.req || conn.req.complete) continue;
      if (conn.bodyStart === UNSEEN) {
        conn.bodyStart = conn.lastByteAt = at;
        conn.bodyBytesAt = bytes;
        continue;
      }
      if (conn.socket.isPaused()) {
        // The server stopped reading (back-pressure while a handler is busy): the client could not send meanwhile.
        conn.bodyStart += elapsed;
        conn.lastByteAt = at;
        continue;
      }
      conn.bodyStart += stalled;
      conn.lastByteAt = Math.min(at, conn.lastByteAt + stalled);
      // mod_reqtimeout's MinRate: the grace, plus one second per `bodyMinRate` bytes received since the head.
      const deadline = conn.bodyStart + bodyGraceMs + ((bytes - conn.bodyBytesAt) / bodyMinRate) * 1_000;
      if (at - conn.lastByteAt > bodyIdleMs || (bodyMinRate > 0 && at > deadline)) {
        this.counts.bodyTimeouts++;
        this.end(conn, 'body_timeout');
      }
    }
    if (this.conns.size > this.limits.shedAt) this.shed(this.conns.size - this.limits.shedAt);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * Closes up to `n` connections, those that have sent the fewest bytes per second of their life first (a connection
   * that never sent a byte, a trickle, a long-idle keep-alive). Never one being answered, nor one younger than the
   * minimum age that has not sent a whole request head yet: that may be a client whose request is on its way. Once
   * its head is in, a young connection has no such shelter, or an attacker reconnecting in a loop would keep the whole
   * table young; its rate is taken over at least the minimum age so that a head alone does not look fast.
   */
  private shed(n: number, newcomer?: Conn): void {
    const at = this.now();
    const { shedMinAgeMs } = this.limits;
    const candidates: { conn: Conn; rate: number }[] = [];
    for (const conn of this.conns.values()) {
      const age = at - conn.openedAt;
      if (conn === newcomer || beingAnswered(conn) || (!conn.req && age < shedMinAgeMs)) continue;
      candidates.push({ conn, rate: conn.socket.bytesRead / Math.max(age, shedMinAgeMs, 1) });
    }
    for (let k = 0; k < n && candidates.length; k++) {
      // Usually one victim per new connection: a linear pick, no sort of the whole table.
      let best = 0;
      for (let i = 1; i < candidates.length; i++) {
        const c = candidates[i]!;
        const b = candidates[best]!;
        if (c.rate < b.rate || (c.rate === b.rate && c.conn.openedAt < b.conn.openedAt)) best = i;
      }
      const [victim] = candidates.splice(best, 1);
      this.counts.shed++;
      this.end(victim!.conn, 'shed');
    }
  }

  private end(conn: Conn, reason: CloseReason): void {
    this.forget(conn.socket);
    const pending = conn.req && !conn.req.complete ? conn.res : undefined;
    this.close(conn.socket, pending, reason);
  }

  private forget(socket: Socket): void {
    const conn = this.conns.get(socket);
    if (!conn) return;
    this.conns.delete(socket);
    this.count(conn.key, -1);
  }

  private count(key: string, delta: number): void {
    const n = (this.perKey.get(key) ?? 0) + delta;
    if (n > 0) this.perKey.set(key, n);
    else this.perKey.delete(key);
  }
}
