// A real TCP server speaking clamd's INSTREAM protocol, strictly enough that wrong framing fails the scan: tests go
// through sockets, chunk lengths and the terminator instead of a mocked scanner.
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** The EICAR anti-virus test file; split so this source file itself is not flagged by a scanner. */
export const EICAR = 'X5O!P%@AP[4\\PZX54(P^)7CC)7}$' + 'EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*';

export type FakeClamdMode = 'scan' | 'error' | 'hangup' | 'silent';

export interface FakeClamd {
  host: string;
  port: number;
  mode: FakeClamdMode;
  /** Every completed scan: the chunk lengths as framed and the bytes reassembled. */
  scans: { chunkLengths: number[]; data: Buffer }[];
  close(): Promise<void>;
}

export async function startFakeClamd(): Promise<FakeClamd> {
  const sockets = new Set<Socket>();
  const fake: FakeClamd = { host: '127.0.0.1', port: 0, mode: 'scan', scans: [], close: async () => {} };

  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buf = Buffer.alloc(0);
    let commandSeen = false;
    const chunks: Buffer[] = [];
    const chunkLengths: number[] = [];
    const reply = (text: string) => socket.end(`${text}\0`);

    socket.on('data', (b: Buffer) => {
      buf = Buffer.concat([buf, b]);
      if (!commandSeen) {
        if (buf.length < 10) return;
        if (buf.subarray(0, 10).toString('latin1') !== 'zINSTREAM\0') return reply('UNKNOWN COMMAND');
        commandSeen = true;
        buf = buf.subarray(10);
      }
      while (buf.length >= 4) {
        const length = buf.readUInt32BE(0);
        if (length === 0) {
          const data = Buffer.concat(chunks);
          fake.scans.push({ chunkLengths, data });
          if (fake.mode === 'hangup') return void socket.destroy();
          if (fake.mode === 'silent') return;
          if (fake.mode === 'error') return reply('INSTREAM size limit exceeded. ERROR');
          return reply(data.includes(EICAR) ? 'stream: Eicar-Test-Signature FOUND' : 'stream: OK');
        }
        if (buf.length < 4 + length) return;
        chunkLengths.push(length);
        chunks.push(buf.subarray(4, 4 + length));
        buf = buf.subarray(4 + length);
      }
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.port = (server.address() as AddressInfo).port;
  fake.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return fake;
}
