import type { Db } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { normalizeDomain } from '../companies/domain.ts';
import type { Deps, Logger } from '../context.ts';
import { hooks as contactWriteHooks } from '../contacts/app/router.ts';
import type { AppContact } from '../contacts/app/schemas.ts';
import { addTags, createContact, updateContact } from '../contacts/app/write.ts';
import { transact } from '../contacts/shared/transact.ts';
import { requireLiveContact } from '../contacts/shared/live.ts';
import type { DealView } from '../deals/schemas.ts';
import { createDeal } from '../deals/service.ts';
import { errors } from '../errors.ts';
import { phoneDigits } from '../messages/phone.ts';
import { smsProviderFor } from '../messages/provider.ts';
import type { MessageView } from '../messages/schemas.ts';
import { sendSms } from '../messages/service.ts';
import { CONTACT_BY_PHONE } from '../messages/sql.ts';
import type { TaskView } from '../tasks/schemas.ts';
import { createTask } from '../tasks/service.ts';
import {
  type AddTagAction,
  type CreateContactAction,
  type CreateDealAction,
  type CreateTaskAction,
  given,
  type SendSmsAction,
  type UpdateContactAction,
} from './action-inputs.ts';
import * as q from './sql.ts';

/*
 * The actions run through the application's own services, so every rule (uniqueness, caps, consent, locks, events)
 * is theirs; only the platform-shaped inputs are translated here. Every change they make emits its events with
 * source `zapier` (spec "Payload shape"), so receivers can ignore what their own automation did; workflow steps
 * (workflows/steps.ts) run these same functions with an actor whose source is `automation`.
 */

export type ActionDeps = Pick<Deps, 'clock' | 'config' | 'jobs' | 'scoreAdjustment'> & { db: Db; log: Logger };

const viaPlatform = (actor: InternalActor): InternalActor => ({ ...actor, eventSource: actor.eventSource ?? 'zapier' });

/** A company of the organization by domain (normalised as everywhere); unknown domains are refused, never created. */
async function companyId(tx: Db, orgId: string, company: string): Promise<string> {
  const domain = normalizeDomain(company);
  if (!domain)
    throw errors.validation(
      [{ path: 'company', message: 'company must be a company domain, e.g. example.com' }],
      'Validation failed: company must be a company domain, e.g. example.com',
    );
  const [row] = await tx.run(q.COMPANY_BY_DOMAIN, { orgId, domain });
  if (!row) throw errors.companyNotFound(domain, 'POST /api/companies');
  return row.id;
}

export function runCreateContact(deps: ActionDeps, actor: InternalActor, input: CreateContactAction): Promise<AppContact> {
  const now = deps.clock.now();
  return transact(deps.db, async (tx) => {
    const company = given(input.company);
    const tags = given(input.tags);
    return createContact(
      tx,
      viaPlatform(actor),
      {
        firstName: input.firstName,
        lastName: input.lastName,
        email: given(input.email),
        phone: given(input.phone),
        companyId: company === undefined ? undefined : await companyId(tx, actor.orgId, company),
        source: given(input.source) ?? 'zapier',
        ...(tags ? { tags } : {}),
      },
      now,
      contactWriteHooks(deps),
    );
  });
}

/** With `id` the contact is that one and `email` is a new value; without it, `email` finds the contact. */
export function runUpdateContact(deps: ActionDeps, actor: InternalActor, input: UpdateContactAction): Promise<AppContact> {
  const now = deps.clock.now();
  return transact(deps.db, async (tx) => {
    let id = given(input.id);
    const email = given(input.email);
    if (id === undefined) {
      // The input's refinement gives an email whenever it gives no id.
      const [found] = await tx.run(q.LIVE_CONTACT_BY_EMAIL, { orgId: actor.orgId, email: email! });
      if (!found) throw errors.notFound(`No contact with email ${email}`);
      id = found.id;
    }
    const company = given(input.company);
    return updateContact(
      tx,
      viaPlatform(actor),
      {
        id,
        email: given(input.id) === undefined ? undefined : email,
        firstName: given(input.firstName),
        lastName: given(input.lastName),
        phone: given(input.phone),
        companyId: company === undefined ? undefined : await companyId(tx, actor.orgId, company),
      },
      now,
      contactWriteHooks(deps),
    );
  });
}

/** The spec's create_deal takes no title: the deal is named after its contact, placed on the pipeline's first stage. */
export function runCreateDeal(deps: ActionDeps, actor: InternalActor, input: CreateDealAction): Promise<DealView> {
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const contact = await requireLiveContact(tx, actor.orgId, input.contactId, 'share');
    const name = [contact.first_name, contact.last_name].filter(Boolean).join(' ') || contact.email || 'New deal';
    return createDeal(tx, viaPlatform(actor), { contactId: input.contactId, pipelineId: input.pipelineId, title: name.slice(0, 300) }, now);
  });
}

/** `contactId`: a workflow step's task is about the run's contact (the platform action takes none). */
export function runCreateTask(deps: ActionDeps, actor: InternalActor, input: CreateTaskAction, contactId?: string): Promise<TaskView> {
  return createTask(deps.db, viaPlatform(actor), { title: input.title, contactId }, deps.clock.now());
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `to` is a contact id or a phone number; a number is matched on its digits to a live contact (the oldest, as for
 * inbound texts), because consent is recorded on contacts: a number no contact has is refused, never texted.
 */
export async function runSendSms(deps: ActionDeps, actor: InternalActor, input: SendSmsAction): Promise<MessageView> {
  let contactId = input.to;
  if (!UUID.test(input.to)) {
    const digits = phoneDigits(input.to);
    if (!digits) {
      throw errors.validation(
        [{ path: 'to', message: 'to must be a contact id or a phone number' }],
        'Validation failed: to must be a contact id or a phone number',
      );
    }
    const [contact] = await deps.db.run(CONTACT_BY_PHONE, { orgId: actor.orgId, digits });
    if (!contact) throw errors.notFound(`No contact has the phone number ${input.to}`);
    contactId = contact.id;
  }
  const smsDeps = {
    provider: smsProviderFor(deps.config, deps.log),
    from: deps.config.SMS_FROM_NUMBER,
    log: deps.log,
    clock: deps.clock,
    linkBase: deps.config.BASE_URL,
  };
  return sendSms(deps.db, viaPlatform(actor), smsDeps, { contactId, body: input.body });
}

export function runAddTag(deps: ActionDeps, actor: InternalActor, input: AddTagAction): Promise<AppContact> {
  return addTags(deps.db, viaPlatform(actor), input.contactId, input.tags, deps.clock.now());
}
