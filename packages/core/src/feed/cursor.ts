/**
 * A place in an organization's changes feed: just after the event written by transaction `txid` at `seq`. Events are
 * read in (txid, seq) order and only below the oldest transaction still running, so every event that will ever be at
 * a place after a cursor commits after the reader saw that place is still ahead of it. Opaque to clients (base64url of
 * `1:<txid>:<seq>`), so the encoding can change under a new version digit.
 */
export interface FeedPosition {
  /** A PostgreSQL xid8, as decimal text (up to 2^64 - 1). */
  txid: string;
  /** The event's seq within the table (bigint as decimal text); `0` is "before every event of txid". */
  seq: string;
}

const DIGITS = /^(0|[1-9]\d{0,19})$/;
const U64_MAX = 18_446_744_073_709_551_615n;
const I64_MAX = 9_223_372_036_854_775_807n;

export function encodeFeedCursor(p: FeedPosition): string {
  return Buffer.from(`1:${p.txid}:${p.seq}`, 'utf8').toString('base64url');
}

/** The position a cursor names, or null when it is not one this API made (the caller answers `invalid_cursor`). */
export function decodeFeedCursor(cursor: string): FeedPosition | null {
  if (cursor.length > 64 || !/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
  const parts = Buffer.from(cursor, 'base64url').toString('utf8').split(':');
  if (parts.length !== 3 || parts[0] !== '1') return null;
  const [, txid, seq] = parts as [string, string, string];
  if (!DIGITS.test(txid) || !DIGITS.test(seq) || BigInt(txid) > U64_MAX || BigInt(seq) > I64_MAX) return null;
  // Round trip: one position, one spelling (no padding or trailing bits that decode to the same text).
  return encodeFeedCursor({ txid, seq }) === cursor ? { txid, seq } : null;
}

/** Later of two positions in feed order. */
export function laterOf(a: FeedPosition, b: FeedPosition): FeedPosition {
  const [at, bt] = [BigInt(a.txid), BigInt(b.txid)];
  if (at !== bt) return at > bt ? a : b;
  return BigInt(a.seq) >= BigInt(b.seq) ? a : b;
}
