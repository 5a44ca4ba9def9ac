import { z } from 'zod';
import { internalProcedure } from '../auth/internal.ts';
import { router } from '../trpc.ts';
import { actionRouter } from './action-router.ts';
import { actionDefinitions, searchDefinitions } from './actions.ts';
import { subscribe, unsubscribe, whoAmI } from './hooks.ts';
import { dropdownRouter, findContactProcedure } from './lookup-router.ts';
import { AUTH_ERRORS, BASE, INPUT_ERRORS, tags } from './meta.ts';
import {
  ActionList,
  MeOutput,
  PollInput,
  PollList,
  SampleList,
  SamplesInput,
  SearchList,
  SubscribeInput,
  Subscription,
  TriggerList,
  UnsubscribeInput,
} from './schemas.ts';
import { listTriggers, pollTrigger, triggerSamples } from './triggers.ts';

/**
 * What REST-hook automation platforms (Zapier and the like) call: subscribe and unsubscribe hooks, test the key, list
 * triggers with samples and poll them, list and run actions, find a contact, and fill dynamic dropdowns. Internal keys (in `X-Api-Key` or `Authorization: Bearer`) and sessions
 * reach it. Subscribing needs the owner or admin role, as webhook endpoints do; everything else any member may do.
 */
export const automationRouter = router({
  subscribe: internalProcedure
    .meta({
      openapi: { method: 'POST', path: `${BASE}/subscribe`, tags, summary: 'Subscribe a REST hook to one trigger (owner or admin)' },
      successStatus: 201,
      errorCodes: [...INPUT_ERRORS, 'forbidden_role', 'hook_url_refused'],
    })
    .input(SubscribeInput)
    .output(Subscription)
    .mutation(({ ctx, input }) => subscribe({ ...ctx.deps, db: ctx.db }, ctx.actor, input)),

  unsubscribe: internalProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: `${BASE}/subscribe/{id}`,
        tags,
        summary: 'Unsubscribe a REST hook (its own key, or an owner or admin)',
      },
      successStatus: 204,
      errorCodes: [...INPUT_ERRORS, 'not_found', 'forbidden_role'],
    })
    .input(UnsubscribeInput)
    .output(z.void())
    .mutation(({ ctx, input }) => unsubscribe(ctx.db, ctx.actor, input.id)),

  me: internalProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${BASE}/me`,
        tags,
        summary: 'Test the key: the organization and user it acts for (connection label)',
      },
      errorCodes: AUTH_ERRORS,
    })
    .input(z.void())
    .output(MeOutput)
    .query(({ ctx }) => whoAmI(ctx.db, ctx.actor)),

  triggers: internalProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${BASE}/triggers`,
        tags,
        summary: 'The triggers a hook may subscribe to, with an example payload, and the samples and polling URLs of each',
      },
      errorCodes: AUTH_ERRORS,
    })
    .input(z.void())
    .output(TriggerList)
    .query(({ ctx }) => listTriggers(ctx.deps.config)),

  samples: internalProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${BASE}/triggers/{event}/samples`,
        tags,
        summary: "Up to 3 of the organization's latest payloads of a trigger",
      },
      errorCodes: [...INPUT_ERRORS, 'not_found'],
    })
    .input(SamplesInput)
    .output(SampleList)
    .query(({ ctx, input }) => triggerSamples(ctx.db, ctx.deps.config, ctx.actor, input.event)),

  poll: internalProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${BASE}/triggers/{event}/poll`,
        tags,
        summary: "A polling trigger: the organization's latest events of a trigger, newest first, each with its id",
        description:
          "A polling platform's `performList` (`pollUrl` in the trigger list): the payloads hooks receive, newest first, each with the event's `id` first; the platform fires for ids it has not seen. Looks through the organization's newest 10,000 events of any kind (AUTOMATION_POLL_SCAN_EVENTS); `GET /v1/events` reads everything since a cursor.",
      },
      errorCodes: [...INPUT_ERRORS, 'not_found'],
    })
    .input(PollInput)
    .output(PollList)
    .query(({ ctx, input }) => pollTrigger(ctx.db, ctx.deps.config, ctx.actor, input)),

  actions: internalProcedure
    .meta({
      openapi: { method: 'GET', path: `${BASE}/actions`, tags, summary: 'The actions with their required and optional inputs' },
      errorCodes: AUTH_ERRORS,
    })
    .input(z.void())
    .output(ActionList)
    .query(({ ctx }) => actionDefinitions(ctx.deps.config.BASE_URL)),

  searches: internalProcedure
    .meta({
      openapi: { method: 'GET', path: `${BASE}/searches`, tags, summary: 'The searches (find-or-create) with their inputs' },
      errorCodes: AUTH_ERRORS,
    })
    .input(z.void())
    .output(SearchList)
    .query(({ ctx }) => searchDefinitions(ctx.deps.config.BASE_URL)),

  findContact: findContactProcedure,
  dropdowns: dropdownRouter,

  run: actionRouter,
});
