import { z } from 'zod';
import { internalProcedure } from '../auth/internal.ts';
import type { RequestContext } from '../context.ts';
import { INTERNAL_ERRORS } from '../errors/surfaces.ts';
import { router } from '../trpc.ts';
import {
  FormCreateInput,
  FormIdInput,
  FormListInput,
  FormPage,
  FormUpdateInput,
  FormView,
  SubmissionListInput,
  SubmissionPage,
} from './schemas.ts';
import { createForm, deleteForm, type FormUrls, getForm, listForms, listSubmissions, updateForm } from './service.ts';

const tags = ['Forms'];
const ON_RECORD = [...INTERNAL_ERRORS, 'not_found'] as const;
const WRITE = [...ON_RECORD, 'pipeline_not_found'] as const;
const urls = (ctx: Pick<RequestContext, 'deps'>): FormUrls => ({ baseUrl: ctx.deps.config.BASE_URL, appUrl: ctx.deps.config.APP_URL });

/**
 * Every member manages forms: a form holds no secret anyone can read back (the CAPTCHA secret is write-only), and
 * building forms is everyday work. Submissions go through the public routes (apps/server/src/http/forms.ts), not here.
 */
export const formsRouter = router({
  list: internalProcedure
    .meta({
      openapi: { method: 'GET', path: '/forms', tags, summary: 'Forms, newest first' },
      errorCodes: [...INTERNAL_ERRORS, 'invalid_cursor'],
    })
    .input(FormListInput)
    .output(FormPage)
    .query(({ ctx, input }) => listForms(ctx.db, ctx.actor, input, urls(ctx))),

  get: internalProcedure
    .meta({ openapi: { method: 'GET', path: '/forms/{id}', tags, summary: 'A form' }, errorCodes: ON_RECORD })
    .input(FormIdInput)
    .output(FormView)
    .query(({ ctx, input }) => getForm(ctx.db, ctx.actor, input.id, urls(ctx))),

  create: internalProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/forms',
        tags,
        summary: 'Create a form',
        description: 'The CAPTCHA secret is stored to verify tokens and never returned (`captcha.secretSet`).',
      },
      successStatus: 201,
      errorCodes: WRITE,
    })
    .input(FormCreateInput)
    .output(FormView)
    .mutation(({ ctx, input }) => createForm(ctx.db, ctx.actor, input, urls(ctx), ctx.deps.clock.now())),

  update: internalProcedure
    .meta({
      openapi: { method: 'PATCH', path: '/forms/{id}', tags, summary: 'Change a form; fields left out keep their values' },
      errorCodes: WRITE,
    })
    .input(FormUpdateInput)
    .output(FormView)
    .mutation(({ ctx, input }) => updateForm(ctx.db, ctx.actor, input, urls(ctx), ctx.deps.clock.now())),

  submissions: internalProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/forms/{id}/submissions',
        tags,
        summary: "A form's submissions, newest first, with their attribution",
      },
      errorCodes: [...ON_RECORD, 'invalid_cursor'],
    })
    .input(SubmissionListInput)
    .output(SubmissionPage)
    .query(({ ctx, input }) => listSubmissions(ctx.db, ctx.actor, input)),

  delete: internalProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/forms/{id}', tags, summary: 'Delete a form (its submissions stay on their contacts)' },
      successStatus: 204,
      errorCodes: ON_RECORD,
    })
    .input(FormIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteForm(ctx.db, ctx.actor, input.id)),
});
