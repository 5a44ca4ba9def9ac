import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { internalClient, internalRest, trpcFailure } from '../support/internal.ts';

let t: TestApp;
beforeAll(async () => {
  t = await initTestApp();
});
afterAll(async () => t?.close());

const client = (key: string) => internalClient(t, key);
const api = (method: string, path: string, key: string, body?: unknown) => internalRest(t, method, path, key, body);
const failure = trpcFailure;
async function setup() {
  const org = await t.newOrg({ plan: 'max' });
  const user = async (role: string) => {
    const [u] = await t.sql<{ id: string }>(
      `insert into users (organization_id, email, password_hash, role) values (?, ?, 'x', ?) returning id`,
      [org.orgId, `${role}-${randomUUID()}@example.com`, role],
    );
    return { id: u!.id, key: await t.newKey({ orgId: org.orgId, userId: u!.id, name: role, type: 'internal' }) };
  };
  const admin = await user('admin');
  const member = await user('member');
  return {
    ...org,
    owner: client(org.internalKey),
    admin: client(admin.key),
    adminId: admin.id,
    member: client(member.key),
    memberKey: member.key,
  };
}
const events = (orgId: string) =>
  t.sql<{ event: string; payload: any }>(
    `select event, payload from outbox_events where organization_id = ? and event like 'nonprofit.%' order by created_at, event`,
    [orgId],
  );
const activatedAt = async (orgId: string) =>
  (await t.sql<{ at: Date | string | null }>(`select nonprofit_activated_at as at from organizations where id = ?`, [orgId]))[0]!.at;

describe('nonprofit verification', () => {
  it('records a rejection without activating anything', async () => {
    const { orgId, admin, adminId } = await setup();
    const r = await admin.nonprofit.recordVerification.mutate({
      status: 'rejected',
      registrationNumber: 'EIN 00-0000000',
      evidence: { note: 'not on registry' },
    });
    expect(r).toMatchObject({
      activated: false,
      nonprofitActivatedAt: null,
      verification: {
        status: 'rejected',
        registrationNumber: 'EIN 00-0000000',
        evidence: { note: 'not on registry' },
        recordedBy: adminId,
      },
    });
    expect(await activatedAt(orgId)).toBeNull();
    expect(await events(orgId)).toEqual([
      {
        event: 'nonprofit.verification_recorded',
        payload: expect.objectContaining({ source: 'app', data: { verification: r.verification } }),
      },
    ]);
  });

  it('activates the nonprofit plan on the first verified verification, once', async () => {
    const { orgId, owner, internalKey } = await setup();
    const first = await api('POST', '/nonprofit/verifications', internalKey, { status: 'verified', registrationNumber: 'EIN 12-3456789' });
    expect(first).toMatchObject({ status: 201, body: { activated: true, nonprofitActivatedAt: expect.any(String) } });
    expect(new Date((await activatedAt(orgId))!).toISOString()).toBe(first.body.nonprofitActivatedAt);

    const second = await owner.nonprofit.recordVerification.mutate({ status: 'verified' });
    expect(second).toMatchObject({ activated: false, nonprofitActivatedAt: first.body.nonprofitActivatedAt });
    const rejected = await owner.nonprofit.recordVerification.mutate({ status: 'rejected' });
    expect(rejected.nonprofitActivatedAt).toBe(first.body.nonprofitActivatedAt);

    const seen = await events(orgId);
    expect(seen.map((e) => e.event).sort()).toEqual([
      'nonprofit.activated',
      'nonprofit.verification_recorded',
      'nonprofit.verification_recorded',
      'nonprofit.verification_recorded',
    ]);
    expect(seen.find((e) => e.event === 'nonprofit.activated')?.payload.data).toEqual({
      organization: { id: orgId, nonprofitActivatedAt: first.body.nonprofitActivatedAt },
      verification: first.body.verification,
    });
    const status = await owner.nonprofit.status.query();
    expect(status.nonprofitActivatedAt).toBe(first.body.nonprofitActivatedAt);
    expect(status.verifications.map((v) => v.status)).toEqual(['rejected', 'verified', 'verified']);
  });

  it('activates once under concurrent verified verifications', async () => {
    const { orgId, owner, admin } = await setup();
    const results = await Promise.all(
      [owner, admin, owner, admin].map((c) => c.nonprofit.recordVerification.mutate({ status: 'verified' })),
    );
    expect(results.filter((r) => r.activated)).toHaveLength(1);
    expect((await events(orgId)).filter((e) => e.event === 'nonprofit.activated')).toHaveLength(1);
  });

  it('is for owners and admins only', async () => {
    const { orgId, member, memberKey } = await setup();
    expect(await failure(member.nonprofit.recordVerification.mutate({ status: 'verified' }))).toEqual({
      status: 403,
      code: 'forbidden_role',
    });
    expect(await failure(member.nonprofit.status.query())).toEqual({ status: 403, code: 'forbidden_role' });
    expect(await api('GET', '/nonprofit', memberKey)).toMatchObject({ status: 403, body: { code: 'forbidden_role' } });
    expect(await activatedAt(orgId)).toBeNull();
    expect(await events(orgId)).toEqual([]);
  });

  it("keeps each organization's verifications to itself", async () => {
    const a = await setup();
    const b = await setup();
    await a.owner.nonprofit.recordVerification.mutate({ status: 'verified' });
    const r = await api('GET', '/nonprofit', b.internalKey);
    expect(r).toEqual({ status: 200, body: { nonprofitActivatedAt: null, verifications: [] } });
    expect(await activatedAt(b.orgId)).toBeNull();
    expect((await a.owner.nonprofit.status.query()).verifications).toHaveLength(1);
  });
});
