/**
 * The Workflows screens as a person uses them: create a workflow in the console, copy the intake URL it shows once,
 * POST to it as another system would, and see the run with each step's outcome; rotate and see the old URL refused; a
 * refused create shows the server's sentences beside the fields; a member sees workflows and runs but no control.
 */
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowRunJob } from '#core/workflows/job.ts';
import { BASE_URL, finishedRun, postIntake } from '../workflows/support.ts';
import { type ConsoleHarness, copied, expectAccessible, FLOW_TIMEOUT, hasChromium, type Person, startConsole } from './support.ts';

/** The text of the elements that describe an input (its hint and its error), as a screen reader reads them. */
const description = (input: Locator) =>
  input.evaluate((el) =>
    (el.getAttribute('aria-describedby') ?? '')
      .split(' ')
      .map((id) => document.getElementById(id)?.textContent ?? '')
      .join(' '),
  );

/** Presses the Copy button beside the once-shown URL and answers what the clipboard then holds. */
async function copyIntakeUrl(page: Page): Promise<string> {
  await page.getByRole('button', { name: 'Copy Intake URL' }).click();
  await page.getByRole('button', { name: 'Copied Intake URL' }).waitFor();
  return copied(page);
}

describe.skipIf(!hasChromium)('the Workflows screens', { timeout: FLOW_TIMEOUT }, () => {
  let h: ConsoleHarness;
  let owner: Person;
  let member: Person;
  let workflowId: string;
  let currentUrl: string;
  beforeAll(async () => {
    // Intake URLs carry BASE_URL; the test posts to the same path on the test server (postIntake maps it).
    h = await startConsole({ BASE_URL });
    // Test apps run no workers: the real worker takes this file's runs, as in ROLE=all.
    await h.t.runtime.boss.work([workflowRunJob(h.t.runtime.deps)]);
    owner = await h.owner();
    member = await h.colleague(owner, 'member');
  });
  afterAll(() => h?.close());

  it('an owner creates a workflow (a refusal shown beside its fields first), copies its URL, and sees a run’s step outcomes', async () => {
    const { page, context } = await h.signedIn(owner, '/workflows');
    await page.getByRole('heading', { name: 'No workflows yet' }).waitFor();
    await expectAccessible(page, 'workflows-empty');

    await page.getByRole('button', { name: 'New workflow' }).click();
    await page.getByRole('button', { name: 'Create workflow' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('Please correct the fields marked below.');
    expect(await description(page.getByLabel('Name', { exact: true }))).toContain('name must not be empty');
    expect(await description(page.getByLabel('Tags (step 1)'))).toContain('add_tag: tags is required');
    expect(await page.getByLabel('Tags (step 1)').getAttribute('aria-invalid')).toBe('true');
    await expectAccessible(page, 'workflows-create-refused');
    expect(await h.t.sql('select id from workflows where organization_id = ?', [owner.orgId])).toEqual([]);

    const [pipeline] = await h.t.sql<{ id: string; name: string }>(
      'select id, name from pipelines where organization_id = ? and is_default',
      [owner.orgId],
    );
    await page.getByLabel('Name', { exact: true }).fill('Webinar sign-ups');
    await page.getByLabel('Tags (step 1)').fill('webinar, vip');
    await page.getByRole('button', { name: 'Add a step' }).click();
    await page.getByLabel('Step 2 action').selectOption({ label: 'Create a deal' });
    await page.getByLabel('Pipeline (step 2)').selectOption({ label: pipeline!.name });
    // Built with the keyboard alone: the third step added, typed and moved with Enter on focused buttons.
    await page.getByRole('button', { name: 'Add a step' }).press('Enter');
    await page.getByLabel('Step 3 action').selectOption({ label: 'Send a text message' });
    await page.getByLabel('Message (step 3)').fill('Thanks for signing up!');
    await page.getByRole('button', { name: 'Move step 3 up' }).press('Enter');
    expect(await page.getByLabel('Message (step 2)').inputValue()).toBe('Thanks for signing up!');
    await page.getByRole('button', { name: 'Create workflow' }).click();

    await page.getByRole('heading', { name: 'The intake URL of your workflow' }).waitFor();
    expect(await page.getByRole('status').filter({ hasText: 'shown only this once' }).count()).toBe(1);
    currentUrl = await copyIntakeUrl(page);
    expect(currentUrl).toMatch(new RegExp(`^${BASE_URL}/workflows/hooks/wfh_[0-9A-Za-z]{43}$`));
    const [stored] = await h.t.sql<{ id: string; steps: unknown }>('select id, steps from workflows where organization_id = ?', [
      owner.orgId,
    ]);
    workflowId = stored!.id;
    expect(stored!.steps).toEqual([
      { action: 'add_tag', input: { tags: ['webinar', 'vip'] } },
      { action: 'send_sms', input: { body: 'Thanks for signing up!' } },
      { action: 'create_deal', input: { pipelineId: pipeline!.id } },
    ]);
    await expectAccessible(page, 'workflows-created');

    await page.getByRole('link', { name: 'Webinar sign-ups' }).first().click();
    await page.getByRole('heading', { name: 'Webinar sign-ups', level: 1 }).waitFor();
    await page
      .getByRole('listitem')
      .filter({ hasText: `Create a deal (Pipeline: ${pipeline!.name})` })
      .waitFor();
    // The URL is not shown again: only its beginning.
    expect(await page.content()).not.toContain(currentUrl);
    await page.getByText('No runs yet.').waitFor();
    await expectAccessible(page, 'workflow');

    const posted = await postIntake(h.t, currentUrl, { email: 'ada@example.com', webinar: 'Pipelines 101' });
    expect(posted.status, JSON.stringify(posted.body)).toBe(202);
    await finishedRun(h.t, posted.body.runId);
    await page.getByRole('button', { name: 'Refresh runs' }).click();
    const row = page.getByRole('row').filter({ hasText: 'ada@example.com' });
    await row.waitFor();
    const text = await row.textContent();
    expect(text).toContain('Completed with errors');
    expect(text).toContain('Add tags: done');
    expect(text).toContain('Create a deal: done');
    expect(text).toMatch(/Send a text message: failed: .*consent.*\(sms_consent_required\)/i);
    await expectAccessible(page, 'workflow-runs');
    await context.close();
  });

  it('a member sees workflows and their runs, and is offered no control the server would refuse', async () => {
    const { page, context } = await h.signedIn(member, '/workflows');
    await page.getByRole('link', { name: 'Webinar sign-ups' }).waitFor();
    expect(await page.getByRole('button', { name: 'New workflow' }).count()).toBe(0);
    expect(await page.getByText('Owners and admins create and change workflows').count()).toBe(1);
    await page.getByRole('link', { name: 'Webinar sign-ups' }).click();
    await page.getByRole('row').filter({ hasText: 'ada@example.com' }).waitFor();
    for (const name of ['Rotate intake URL', 'Delete workflow', 'Turn off']) {
      expect(await page.getByRole('button', { name }).count(), name).toBe(0);
    }
    await expectAccessible(page, 'workflow-member');

    // An address naming no workflow shows the server's sentence, not a blank screen.
    await page.goto('/app/workflows/not-an-id');
    expect(await page.getByRole('alert').textContent()).toContain('id must be a workflow id (UUID)');
    await page.goto('/app/workflows/00000000-0000-4000-8000-000000000000');
    expect(await page.getByRole('alert').textContent()).toContain('No workflow with id 00000000-0000-4000-8000-000000000000');
    await context.close();
  });

  it('an owner rotates the URL (the old one refused at once), turns the workflow off, and deletes it', async () => {
    const { page, context } = await h.signedIn(owner, `/workflows/${workflowId}`);
    await page.getByRole('button', { name: 'Rotate intake URL' }).click();
    await page.getByRole('button', { name: 'Rotate now' }).click();
    await page.getByRole('heading', { name: 'The new intake URL' }).waitFor();
    const rotated = await copyIntakeUrl(page);
    expect(rotated).not.toBe(currentUrl);
    expect((await postIntake(h.t, currentUrl, { email: 'grace@example.com' })).status).toBe(404);
    const accepted = await postIntake(h.t, rotated, { email: 'grace@example.com' });
    expect(accepted.status).toBe(202);
    await finishedRun(h.t, accepted.body.runId);

    await page.getByRole('button', { name: 'Turn off' }).click();
    await page.getByRole('button', { name: 'Turn on' }).waitFor();
    expect((await postIntake(h.t, rotated, { email: 'grace@example.com' })).status).toBe(404);

    await page.getByRole('button', { name: 'Delete workflow' }).click();
    await page.getByRole('button', { name: 'Delete Webinar sign-ups for good' }).click();
    await page.getByRole('heading', { name: 'No workflows yet' }).waitFor();
    expect(await h.t.sql('select id from workflows where organization_id = ?', [owner.orgId])).toEqual([]);
    await context.close();
  });
});
