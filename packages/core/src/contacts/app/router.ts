import { internalProcedure } from '../../auth/internal.ts';
import type { Deps } from '../../context.ts';
import { errors, issuesFromZod } from '../../errors.ts';
import { scoreAdjustmentHook } from '../shared/adjust-score-job.ts';
import { router } from '../../trpc.ts';
import { restoreContact, trashContact } from './lifecycle.ts';
import { listContacts, listTrash } from './list.ts';
import { mergeContacts } from './merge.ts';
import {
  AppContact,
  ContactCreateInput,
  ContactGetInput,
  ContactListInput,
  ContactMergeInput,
  ContactMergeOutput,
  ContactPage,
  ContactUpdateInput,
  ContactWithTimeline,
  DeleteOutput,
  IdInput,
  ScoreOverrideInput,
  StageInput,
  TagsInput,
  TimelineInput,
  TimelinePage,
  TrashListInput,
  TrashPage,
} from './schemas.ts';
import { getContactWithTimeline, getTimeline } from './timeline.ts';
import { addTags, createContact, removeTags, setScoreOverride, setStage, updateContact, type WriteHooks } from './write.ts';

const tags = ['Contacts'];
const READ_ERRORS = ['unauthorized', 'wrong_api_surface', 'rate_limited', 'validation_failed'] as const;
const WRITE_ERRORS = [...READ_ERRORS, 'not_found', 'save_failed'] as const;

/** Writes that change score inputs queue the AI score adjustment, as /v1 upserts do. */
export function hooks(deps: Pick<Deps, 'jobs' | 'scoreAdjustment'>): WriteHooks {
  return {
    onScoreInputsChanged: scoreAdjustmentHook(deps, deps.jobs),
  };
}

/**
 * The spec gives a wrong merge payload the message `Validation failed` exactly; the issues stay in `issues`. Runs
 * around the input parser, so it sees the parser's error.
 */
function exactValidationMessage(error: { code: string; cause?: unknown }): void {
  if (error.code !== 'BAD_REQUEST') return;
  const cause = error.cause as { name?: unknown; issues?: unknown } | undefined;
  if (cause?.name === 'ZodError' && Array.isArray(cause.issues)) throw errors.validation(issuesFromZod(cause.issues));
}

export const appContactsRouter = router({
  list: internalProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/contacts',
        tags,
        summary: 'List live contacts: filters, sorting, cursor pages of 25 (at most 100)',
      },
      errorCodes: [...READ_ERRORS, 'invalid_cursor'],
    })
    .input(ContactListInput)
    .output(ContactPage)
    .query(({ ctx, input }) => listContacts(ctx.db, ctx.actor, input)),

  get: internalProcedure
    .meta({
      openapi: { method: 'GET', path: '/contacts/{id}', tags, summary: 'A contact with its consent and the first page of its timeline' },
      errorCodes: [...READ_ERRORS, 'not_found'],
    })
    .input(ContactGetInput)
    .output(ContactWithTimeline)
    .query(({ ctx, input }) => getContactWithTimeline(ctx.db, ctx.actor, input.id, input.timelineLimit, ctx.deps.clock.now())),

  timeline: internalProcedure
    .meta({
      openapi: { method: 'GET', path: '/contacts/{id}/timeline', tags, summary: 'Further pages of a contact timeline, newest first' },
      errorCodes: [...READ_ERRORS, 'not_found', 'invalid_cursor'],
    })
    .input(TimelineInput)
    .output(TimelinePage)
    .query(({ ctx, input }) => getTimeline(ctx.db, ctx.actor, input.id, input.limit, input.cursor)),

  create: internalProcedure
    .meta({
      openapi: { method: 'POST', path: '/contacts', tags, summary: 'Create a contact' },
      successStatus: 201,
      errorCodes: [...WRITE_ERRORS, 'email_exists', 'contact_limit_reached', 'company_not_found'],
    })
    .input(ContactCreateInput)
    .output(AppContact)
    .mutation(({ ctx, input }) =>
      createContact(ctx.db, ctx.actor, input, ctx.deps.clock.now(), hooks({ jobs: ctx.jobs, scoreAdjustment: ctx.deps.scoreAdjustment })),
    ),

  update: internalProcedure
    .meta({
      openapi: { method: 'POST', path: '/contacts/{id}/update', tags, summary: 'Update a contact (the email may change, staying unique)' },
      errorCodes: [...WRITE_ERRORS, 'email_exists', 'company_not_found'],
    })
    .input(ContactUpdateInput)
    .output(AppContact)
    .mutation(({ ctx, input }) =>
      updateContact(ctx.db, ctx.actor, input, ctx.deps.clock.now(), hooks({ jobs: ctx.jobs, scoreAdjustment: ctx.deps.scoreAdjustment })),
    ),

  addTags: internalProcedure
    .meta({
      openapi: { method: 'POST', path: '/contacts/{id}/tags/add', tags, summary: 'Add tags (one contact.tag_added per new tag)' },
      errorCodes: WRITE_ERRORS,
    })
    .input(TagsInput)
    .output(AppContact)
    .mutation(({ ctx, input }) => addTags(ctx.db, ctx.actor, input.id, input.tags, ctx.deps.clock.now())),

  removeTags: internalProcedure
    .meta({
      openapi: { method: 'POST', path: '/contacts/{id}/tags/remove', tags, summary: 'Remove tags (case-insensitive)' },
      errorCodes: WRITE_ERRORS,
    })
    .input(TagsInput)
    .output(AppContact)
    .mutation(({ ctx, input }) => removeTags(ctx.db, ctx.actor, input.id, input.tags, ctx.deps.clock.now())),

  setStage: internalProcedure
    .meta({
      openapi: { method: 'POST', path: '/contacts/{id}/stage', tags, summary: 'Move a contact to a stage' },
      errorCodes: WRITE_ERRORS,
    })
    .input(StageInput)
    .output(AppContact)
    .mutation(({ ctx, input }) => setStage(ctx.db, ctx.actor, input.id, input.stage, ctx.deps.clock.now())),

  setScoreOverride: internalProcedure
    .meta({
      openapi: { method: 'POST', path: '/contacts/{id}/score', tags, summary: 'Set (0-100) or clear (null) the manual score override' },
      errorCodes: WRITE_ERRORS,
    })
    .input(ScoreOverrideInput)
    .output(AppContact)
    .mutation(({ ctx, input }) => setScoreOverride(ctx.db, ctx.actor, input.id, input.score, ctx.deps.clock.now())),

  delete: internalProcedure
    .meta({
      openapi: { method: 'POST', path: '/contacts/{id}/delete', tags, summary: 'Move a contact to trash (restorable for 30 days)' },
      errorCodes: WRITE_ERRORS,
    })
    .input(IdInput)
    .output(DeleteOutput)
    .mutation(({ ctx, input }) => trashContact(ctx.db, ctx.actor, input.id, ctx.deps.clock.now())),

  trash: internalProcedure
    .meta({
      openapi: { method: 'GET', path: '/trash/contacts', tags, summary: 'Contacts in trash, most recently deleted first' },
      errorCodes: [...READ_ERRORS, 'invalid_cursor'],
    })
    .input(TrashListInput)
    .output(TrashPage)
    .query(({ ctx, input }) => listTrash(ctx.db, ctx.actor, input, ctx.deps.clock.now())),

  restore: internalProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/contacts/{id}/restore',
        tags,
        summary: 'Restore a contact from trash (owner or admin, within 30 days)',
      },
      errorCodes: [...WRITE_ERRORS, 'forbidden_role', 'not_in_trash', 'restore_window_expired', 'email_exists', 'contact_limit_reached'],
    })
    .input(IdInput)
    .output(AppContact)
    .mutation(({ ctx, input }) => restoreContact(ctx.db, ctx.actor, input.id, ctx.deps.clock.now())),

  merge: internalProcedure
    .use(async ({ next }) => {
      const result = await next();
      if (!result.ok) exactValidationMessage(result.error);
      return result;
    })
    .meta({
      openapi: {
        method: 'POST',
        path: '/contacts/merge',
        tags,
        summary: 'Merge duplicates into a primary contact; the duplicates are deleted for good (owner or admin)',
      },
      errorCodes: [...WRITE_ERRORS, 'forbidden_role', 'email_exists'],
    })
    .input(ContactMergeInput)
    .output(ContactMergeOutput)
    .mutation(({ ctx, input }) =>
      mergeContacts(ctx.db, ctx.actor, input, ctx.deps.clock.now(), hooks({ jobs: ctx.jobs, scoreAdjustment: ctx.deps.scoreAdjustment })),
    ),
});
