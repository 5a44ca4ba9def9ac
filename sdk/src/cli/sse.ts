/** One Server-Sent Event: `event` defaults to `message`; `id` is the last id the stream set (carried over, as the spec says). */
export interface SseEvent {
  event: string;
  data: string;
  id: string;
}

/**
 * An incremental parser of `text/event-stream` (the WHATWG rules: lines end in CRLF, LF or CR; a blank line dispatches;
 * `:` starts a comment; one space after the colon is dropped; `data` lines join with LF). Feed it decoded text in any
 * chunking; a CR at the end of a chunk waits for the next one to tell CRLF from CR.
 */
export class SseParser {
  /** The id to send as Last-Event-ID when reconnecting. */
  lastEventId = '';
  /** The reconnection delay the server asked for (`retry:`), in ms, if any. */
  retry: number | undefined;
  private buffer = '';
  private event = '';
  private data: string[] = [];
  private readonly onEvent: (e: SseEvent) => void;
  private readonly onComment: (text: string) => void;

  constructor(onEvent: (e: SseEvent) => void, onComment: (text: string) => void = () => undefined) {
    this.onEvent = onEvent;
    this.onComment = onComment;
  }

  push(text: string): void {
    this.buffer += text;
    let start = 0;
    for (;;) {
      const cr = this.buffer.indexOf('\r', start);
      const lf = this.buffer.indexOf('\n', start);
      const end = cr < 0 ? lf : lf < 0 ? cr : Math.min(cr, lf);
      if (end < 0) break;
      // A CR as the very last character may be the first half of CRLF: wait for more.
      if (end === cr && cr === this.buffer.length - 1) break;
      this.line(this.buffer.slice(start, end));
      start = end + (end === cr && this.buffer[cr + 1] === '\n' ? 2 : 1);
    }
    this.buffer = this.buffer.slice(start);
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length) this.onEvent({ event: this.event || 'message', data: this.data.join('\n'), id: this.lastEventId });
      this.event = '';
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return this.onComment(line.slice(1).trimStart());
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.lastEventId = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.retry = Number(value);
  }
}
