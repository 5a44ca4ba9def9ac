/**
 * The LISTEN connection of its own (packages/db/src/channel-listener.ts): up once LISTEN is in force, each channel's
 * notifications in commit order and to that channel only, all channels on one connection, down on a loss and up again
 * after `retryMs`, and nothing left behind by close(), whether it was listening, still connecting, or waiting to try
 * again.
 */
import { once } from 'node:events';
import { systemClock } from '#core/clock.ts';
import { ChannelListener } from '@leadwire/db';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { freePort } from '../support/process.ts';

const silent = { info: () => {}, warn: () => {} };
let db: TestDatabase;
let admin: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase('channel_listener');
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
});
afterAll(async () => {
  await admin?.end();
  await db?.drop();
});

// The retry pause on the system clock: nothing here moves a clock.
const listener = (url: string, name: string, channels = ['test_channel']) =>
  new ChannelListener({ url, channels, retryMs: 10, log: silent, applicationName: name, timers: systemClock });

/** Backends of this application still connected, until there are `n` (a closed connection takes a moment to go). */
async function backends(name: string, n: number): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const { rows } = await admin.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where application_name = $1`, [
      name,
    ]);
    if (rows[0]!.n === n) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${name}: never ${n} backends`);
}

describe('ChannelListener', () => {
  it('hears the channel in commit order, and only that channel', async () => {
    const l = listener(db.url, 'cl-order');
    try {
      expect(await l.start()).toBe(true);
      const got: string[] = [];
      const channel = l.channel('test_channel');
      channel.on('message', (m) => got.push(m));
      await admin.query(`select pg_notify('other_channel', 'no')`);
      await admin.query('begin');
      await admin.query(`select pg_notify('test_channel', 'one'), pg_notify('test_channel', 'two')`);
      await admin.query('rollback');
      for (const m of ['a', 'b', 'c']) await admin.query(`select pg_notify('test_channel', $1)`, [m]);
      while (got.length < 3) await once(channel, 'message');
      expect(got).toEqual(['a', 'b', 'c']);
    } finally {
      await l.close();
    }
    await backends('cl-order', 0);
  });

  it('listens on all its channels over one connection, handing each channel its own notifications', async () => {
    const l = listener(db.url, 'cl-two', ['first_channel', 'second_channel']);
    try {
      expect(await l.start()).toBe(true);
      await backends('cl-two', 1);
      const [first, second] = [l.channel('first_channel'), l.channel('second_channel')];
      expect([first.listening, second.listening, first.backendPid]).toEqual([true, true, l.backendPid]);
      expect(second.backendPid).toBe(l.backendPid);
      const got: string[] = [];
      first.on('message', (m) => got.push(`first:${m}`));
      second.on('message', (m) => got.push(`second:${m}`));
      for (const [channel, m] of [
        ['second_channel', 'a'],
        ['first_channel', 'b'],
        ['second_channel', 'c'],
      ])
        await admin.query('select pg_notify($1, $2)', [channel, m]);
      while (got.length < 3) await Promise.race([once(first, 'message'), once(second, 'message')]);
      expect(got).toEqual(['second:a', 'first:b', 'second:c']);
      // A loss takes every channel down and back up together.
      const events: string[] = [];
      for (const [name, c] of [['first', first] as const, ['second', second] as const])
        for (const event of ['down', 'up'] as const) c.on(event, () => events.push(`${name} ${event}`));
      const up = once(second, 'up');
      await admin.query('select pg_terminate_backend($1)', [l.backendPid]);
      await up;
      expect(events).toEqual(['first down', 'second down', 'first up', 'second up']);
      expect(() => l.channel('third_channel')).toThrow(/does not listen on third_channel/);
    } finally {
      await l.close();
    }
    await backends('cl-two', 0);
  });

  it('goes down on a loss and comes back with a new connection', async () => {
    const l = listener(db.url, 'cl-loss');
    try {
      await l.start();
      const pid = l.backendPid;
      const down = once(l.channel('test_channel'), 'down');
      const up = once(l.channel('test_channel'), 'up');
      await admin.query('select pg_terminate_backend($1)', [pid]);
      await down;
      await up;
      expect(l.listening).toBe(true);
      expect(l.backendPid).not.toBe(pid);
      const heard = once(l.channel('test_channel'), 'message');
      await admin.query(`select pg_notify('test_channel', 'after')`);
      expect(await heard).toEqual(['after']);
    } finally {
      await l.close();
    }
    await backends('cl-loss', 0);
  });

  it('starts without a database, keeps trying, and stops trying on close', async () => {
    const url = new URL(db.url);
    url.port = String(await freePort());
    const l = listener(url.toString(), 'cl-none');
    let ups = 0;
    l.channel('test_channel').on('up', () => ups++);
    expect(await l.start()).toBe(false);
    expect(l.listening).toBe(false);
    await l.close();
    expect(ups).toBe(0);
  });

  it('ends a connection still being opened when closed meanwhile, and never reports it up', async () => {
    const l = listener(db.url, 'cl-closing');
    let ups = 0;
    l.channel('test_channel').on('up', () => ups++);
    const started = l.start();
    await l.close();
    expect(await started).toBe(false);
    expect([ups, l.listening]).toEqual([0, false]);
    await backends('cl-closing', 0);
  });

  it('refuses a channel name that is not a plain identifier, and a listener without a channel', () => {
    expect(() => listener(db.url, 'x', ['ok_channel', 'a; drop table x'])).toThrow(/plain channel/);
    expect(() => listener(db.url, 'x', [])).toThrow(/at least one channel/);
  });
});
