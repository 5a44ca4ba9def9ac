import { randomUUID } from 'node:crypto';
import { answerOf, type TestApp } from '../support/app.ts';

export type Credential = { apiKey: string } | { bearer: string } | { headers: Record<string, string> } | null;

/** A REST call under /api/integrations/automation, authenticated the way a REST-hook platform does (X-Api-Key) or not. */
export async function automation(t: TestApp, method: string, path: string, cred: Credential, body?: unknown) {
  const headers: Record<string, string> = {};
  if (cred && 'apiKey' in cred) headers['x-api-key'] = cred.apiKey;
  if (cred && 'bearer' in cred) headers.authorization = `Bearer ${cred.bearer}`;
  if (cred && 'headers' in cred) Object.assign(headers, cred.headers);
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${t.origin}/api/integrations/automation${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return answerOf(res);
}

/** An organization with an Internal key for each role (the owner's comes with the organization). */
export async function orgWithRoles(t: TestApp) {
  const org = await t.newOrg({ plan: 'max' });
  const keyFor = async (role: 'admin' | 'member') => {
    const [u] = await t.sql<{ id: string }>(
      `insert into users (organization_id, email, password_hash, role) values (?, ?, 'x', ?) returning id`,
      [org.orgId, `${role}-${randomUUID()}@example.com`, role],
    );
    return { userId: u!.id, key: await t.newKey({ orgId: org.orgId, userId: u!.id, name: `${role} key`, type: 'internal' }) };
  };
  return { ...org, admin: await keyFor('admin'), member: await keyFor('member') };
}

/** Names a test resolver knows: a public address, private ones, and the loopback. */
export const HOSTS: Record<string, string[]> = {
  'hooks.example.com': ['93.184.215.14'],
  'intranet.example.com': ['10.1.2.3'],
  'mixed.example.com': ['93.184.215.14', '169.254.169.254'],
  'ula.example.com': ['fd12:3456:789a::1'],
  localhost: ['127.0.0.1', '::1'],
  'ip6-localhost': ['::1'],
};

export const testResolver = async (hostname: string): Promise<string[]> => {
  const found = HOSTS[hostname];
  if (found) return found;
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
};
