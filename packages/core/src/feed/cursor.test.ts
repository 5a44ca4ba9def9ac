import { describe, expect, it } from 'vitest';
import { decodeFeedCursor, encodeFeedCursor, laterOf } from './cursor.ts';

describe('feed cursor', () => {
  it('round-trips a position', () => {
    const p = { txid: '18446744073709551615', seq: '9223372036854775807' };
    expect(decodeFeedCursor(encodeFeedCursor(p))).toEqual(p);
    expect(decodeFeedCursor(encodeFeedCursor({ txid: '771', seq: '0' }))).toEqual({ txid: '771', seq: '0' });
  });

  it.each([
    ['empty', ''],
    ['not base64url', 'a+b/c='],
    ['another version', Buffer.from('2:1:1').toString('base64url')],
    ['too few parts', Buffer.from('1:5').toString('base64url')],
    ['a negative seq', Buffer.from('1:5:-1').toString('base64url')],
    ['leading zeros', Buffer.from('1:05:1').toString('base64url')],
    ['beyond xid8', Buffer.from('1:18446744073709551616:1').toString('base64url')],
    ['beyond bigint', Buffer.from('1:1:9223372036854775808').toString('base64url')],
    ['a uuid', '3f2c6a0e-8b1d-4c47-9d2a-5e7f1b3c9a10'],
    ['very long', 'A'.repeat(65)],
  ])('refuses %s', (_, cursor) => {
    expect(decodeFeedCursor(cursor)).toBeNull();
  });

  it('orders positions by transaction, then seq', () => {
    expect(laterOf({ txid: '9', seq: '100' }, { txid: '10', seq: '1' })).toEqual({ txid: '10', seq: '1' });
    expect(laterOf({ txid: '10', seq: '3' }, { txid: '10', seq: '2' })).toEqual({ txid: '10', seq: '3' });
  });
});
