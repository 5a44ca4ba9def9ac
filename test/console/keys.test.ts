/**
 * The API keys, Members and Trash screens as people use them: a Public key created behind the password confirmation
 * and used against /v1 with the value the page showed, then revoked; an invitation and a role change; a contact
 * restored from trash; and each role offered only what the server lets it do.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleHarness, copied, expectAccessible, FLOW_TIMEOUT, hasChromium, type Person, startConsole } from './support.ts';

const upsert = (h: ConsoleHarness, key: string, email: string) =>
  fetch(`${h.t.v1}/contacts/upsert`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email, firstName: 'Ada' }),
  });

const buttons = async (page: Page, name: RegExp) => page.getByRole('button', { name }).count();

describe.skipIf(!hasChromium)('the API keys, Members and Trash screens', { timeout: FLOW_TIMEOUT }, () => {
  let h: ConsoleHarness;
  let owner: Person;
  let admin: Person;
  let member: Person;
  beforeAll(async () => {
    h = await startConsole();
    owner = await h.owner();
    [admin, member] = [await h.colleague(owner, 'admin'), await h.colleague(owner, 'member')];
  });
  afterAll(() => h?.close());

  it('creates a Public key after the password, shows it once, works on /v1 until revoked from the list', async () => {
    const { page, context } = await h.signedIn(owner, '/keys');
    await page.getByRole('heading', { name: 'No API keys yet' }).waitFor();
    await expectAccessible(page, 'keys');

    // The password is asked for in the form; a wrong one is refused beside the field, and nothing is created.
    await page.getByLabel('Your password').fill('not my password');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('wrong_password').waitFor();
    expect(await page.getByLabel('Your password').getAttribute('aria-invalid')).toBe('true');
    await expectAccessible(page, 'keys-refused');

    // The right password unlocks creation (the field goes); a key with no name and no permission is refused field by field.
    await page.getByLabel('Your password').fill(owner.password);
    await page.getByLabel('Expires after (days, optional)').fill('99999');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('Please correct the fields marked below.').waitFor();
    expect(await page.getByLabel('Your password').count()).toBe(0);
    expect(await page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByText('A Public API key needs at least one permission').count()).toBe(1);
    expect(await page.getByText('expiresInDays must be a whole number of days, 1 to 3650').count()).toBe(1);
    expect(await h.t.sql('select 1 from api_keys where organization_id = ?', [owner.orgId])).toEqual([]);
    await expectAccessible(page, 'keys-invalid');

    await page.getByLabel('Name', { exact: true }).fill('Website form');
    await page.getByLabel('Expires after (days, optional)').fill('');
    await page.getByLabel('Send leads').check();
    await page.getByLabel('Write contacts').check();
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('heading', { name: 'Your new key “Website form”' }).waitFor();
    expect(await page.getByText('it will not be shown again').count()).toBe(1);
    const value = (await page.getByLabel('API key value', { exact: true }).textContent())!;
    expect(value).toMatch(/^ck_live_/);
    await page.getByRole('button', { name: 'Copy API key value' }).click();
    // The button's name follows its visible text (WCAG 2.5.3), and says it worked.
    await page.getByRole('button', { name: 'Copied API key value' }).waitFor();
    expect(await copied(page)).toBe(value);
    // Unlocked for 5 minutes: the password field is gone; the list shows the key with who made it.
    expect(await page.getByLabel('Your password').count()).toBe(0);
    const row = page.getByRole('row', { name: /Website form/ });
    await row.getByText(owner.email).waitFor();
    expect(await row.textContent()).toContain('leads:write');
    await expectAccessible(page, 'keys-created');
    const [stored] = await h.t.sql<{ permissions: string[]; type: string }>('select permissions, type from api_keys where name = ?', [
      'Website form',
    ]);
    expect(stored).toEqual({ type: 'public', permissions: expect.arrayContaining(['leads:write', 'contacts:write']) });

    // The value the page showed works against /v1.
    const first = await upsert(h, value, 'ada@example.com');
    expect([200, 201]).toContain(first.status);

    // Once dismissed the value is gone from the page for good; revoking takes two steps, by keyboard.
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.getByText(value).count()).toBe(0);
    await page.getByRole('button', { name: 'Revoke Website form' }).click();
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Yes, revoke it');
    await page.keyboard.press('Enter');
    await page.getByText('is revoked: requests with it are refused').waitFor();
    await row.getByText('Revoked').waitFor();
    const after = await upsert(h, value, 'ada@example.com');
    expect(after.status).toBe(401);
    expect(((await after.json()) as { code: string }).code).toBe('unauthorized');
    await context.close();
  });

  it('invites a member, changes a role, deactivates and reactivates, and shows a refusal beside its row', async () => {
    const { page, context } = await h.signedIn(owner, '/members');
    await page.getByRole('row', { name: new RegExp(member.email) }).waitFor();
    await expectAccessible(page, 'members');

    // Inviting someone already in a workspace is refused beside the form, in the server's words.
    await page.getByLabel('Email', { exact: true }).fill(admin.email);
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await page.getByText('email_taken').waitFor();
    await expectAccessible(page, 'members-invite-refused');

    const invitee = `invitee-${Date.now()}@example.com`;
    await page.getByLabel('Email', { exact: true }).fill(invitee);
    await page.getByLabel('Role', { exact: true }).selectOption('admin');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await page.getByText(`Invitation sent to ${invitee}. It is pending until`).waitFor();
    const [invite] = await h.t.sql<{ role: string }>('select role from invites where email = ? and accepted_at is null', [invitee]);
    expect(invite).toEqual({ role: 'admin' });
    // Listed as pending by the server (accounts.invites), with who sent it and when it expires.
    await page.getByRole('row', { name: new RegExp(`${invitee}.*Admin.*${owner.email}`) }).waitFor();

    // The member becomes an admin.
    await page.getByLabel(`Role of ${member.email}`).selectOption('admin');
    await page.getByRole('button', { name: `Change role of ${member.email}` }).click();
    await page.getByText(`${member.email} is now admin.`).waitFor();
    const role = async (who: Person) =>
      (await h.t.sql<{ role: string; active: boolean }>('select role, active from users where id = ?', [who.userId]))[0];
    expect(await role(member)).toEqual({ role: 'admin', active: true });

    // The only owner demoting themselves: last_owner, shown beside their row.
    await page.getByLabel(`Role of ${owner.email}`).selectOption('member');
    await page.getByRole('button', { name: `Change role of ${owner.email}` }).click();
    const ownerRow = page.getByRole('table', { name: 'Members' }).getByRole('row', { name: new RegExp(owner.email) });
    await ownerRow.getByText('last_owner').waitFor();
    expect(await role(owner)).toEqual({ role: 'owner', active: true });
    await expectAccessible(page, 'members-refused');

    await page.getByRole('button', { name: `Deactivate ${member.email}` }).click();
    await page.getByRole('button', { name: 'Yes, deactivate' }).click();
    await page.getByText(`${member.email} is deactivated.`).waitFor();
    expect(await role(member)).toEqual({ role: 'admin', active: false });
    await page.getByRole('button', { name: `Reactivate ${member.email}` }).click();
    await page.getByText(`${member.email} is active again`).waitFor();
    expect(await role(member)).toEqual({ role: 'admin', active: true });
    // Put back for the next test.
    await h.t.sql(`update users set role = 'member' where id = ?`, [member.userId]);
    await context.close();
  });

  it('restores a trashed contact for an owner, with the days left shown', async () => {
    const api = await h.api(owner);
    const contact = await api.contacts.create.mutate({ email: 'trashed@example.com', firstName: 'Grace', lastName: 'Hopper' });
    await api.contacts.delete.mutate({ id: contact.id });
    const other = await api.contacts.create.mutate({ email: 'taken@example.com', firstName: 'Taken' });
    await api.contacts.delete.mutate({ id: other.id });
    // A live contact takes the email of the second one meanwhile: its restore is refused, beside its row.
    await api.contacts.create.mutate({ email: 'taken@example.com', firstName: 'Newcomer' });

    const { page, context } = await h.signedIn(owner, '/trash');
    const row = page.getByRole('row', { name: /Grace Hopper/ });
    await row.getByText('30 days').waitFor();
    await expectAccessible(page, 'trash');

    await page.getByRole('button', { name: 'Restore Taken' }).click();
    await page.getByRole('row', { name: /Taken/ }).getByRole('alert').waitFor();
    expect(await page.getByRole('row', { name: /Taken/ }).textContent()).toContain('email_exists');
    await expectAccessible(page, 'trash-refused');

    await page.getByRole('button', { name: 'Restore Grace Hopper' }).click();
    await page.getByText('Grace Hopper is back in your contacts.').waitFor();
    await row.waitFor({ state: 'detached' });
    const [back] = await h.t.sql<{ deleted_at: Date | null }>('select deleted_at from contacts where id = ?', [contact.id]);
    expect(back).toEqual({ deleted_at: null });
    await context.close();
  });

  it('offers a member no button the server would refuse, and an admin nothing over an owner', async () => {
    // A key the owner made, which a member must not see, and one of the member's own.
    const ownerApi = await h.api(owner);
    const contact = await ownerApi.contacts.create.mutate({ email: 'still-trashed@example.com', firstName: 'Still' });
    await ownerApi.contacts.delete.mutate({ id: contact.id });

    const { page, context } = await h.signedIn(member, '/trash');
    await page.getByRole('row', { name: /Still/ }).waitFor();
    expect(await buttons(page, /Restore/)).toBe(0);
    expect(await page.getByText('Only owners and admins of your workspace can restore them').count()).toBe(1);

    await page.getByRole('link', { name: 'Members' }).click();
    await page.getByRole('row', { name: new RegExp(owner.email) }).waitFor();
    expect(await buttons(page, /Deactivate|Reactivate|Change role|Send invitation/)).toBe(0);
    expect(await page.getByRole('combobox').count()).toBe(0);

    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'No API keys yet' }).waitFor();
    // Members may create keys of their own (the server lets them); the owner's keys are neither listed nor revocable.
    expect(await buttons(page, /Revoke/)).toBe(0);
    expect(await page.getByRole('row', { name: /Website form/ }).count()).toBe(0);
    await context.close();

    const asAdmin = await h.signedIn(admin, '/members');
    await asAdmin.page
      .getByRole('table', { name: 'Members' })
      .getByRole('row', { name: new RegExp(owner.email) })
      .waitFor();
    expect(await buttons(asAdmin.page, new RegExp(`Deactivate ${owner.email}`))).toBe(0);
    expect(await buttons(asAdmin.page, new RegExp(`Deactivate ${member.email}`))).toBe(1);
    expect(await buttons(asAdmin.page, new RegExp(`Deactivate ${admin.email}`))).toBe(0); // themselves
    expect(await asAdmin.page.getByRole('combobox', { name: /Role of/ }).count()).toBe(0);
    expect(await buttons(asAdmin.page, /Send invitation/)).toBe(1);
    await asAdmin.page.getByRole('link', { name: 'API keys' }).click();
    // An admin revokes any key of the workspace, the owner's included.
    await asAdmin.page.getByRole('row', { name: /Website form/ }).waitFor();
    await asAdmin.context.close();
  });
});
