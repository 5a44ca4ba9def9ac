import { internalProcedure } from '../auth/internal.ts';
import { errors } from '../errors.ts';
import { baseProcedure, router } from '../trpc.ts';
import { providerSecretMatches } from './inbound-auth.ts';
import { smsProviderFor } from './provider.ts';
import { InboundSmsInput, InboundSmsOutput, ListMessagesInput, ListMessagesOutput, MessageView, SendSmsInput } from './schemas.ts';
import { listMessages, receiveSms, sendSms } from './service.ts';

/** The SMS provider's calls: no user, only the shared secret it was given (X-Provider-Secret). */
const providerProcedure = baseProcedure.use(async ({ ctx, next }) => {
  if (!providerSecretMatches(ctx.deps.config.SMS_INBOUND_SECRET, ctx.header('x-provider-secret'))) {
    throw errors.unauthorized('Missing or wrong X-Provider-Secret');
  }
  return next();
});

export const messagesRouter = router({
  send: internalProcedure
    .meta({
      openapi: { method: 'POST', path: '/messages/send', tags: ['Messages'], summary: 'Text a contact who consented to SMS' },
      successStatus: 201,
      errorCodes: ['not_found', 'sms_consent_required', 'contact_has_no_phone'],
    })
    .input(SendSmsInput)
    .output(MessageView)
    .mutation(({ ctx, input }) =>
      sendSms(
        ctx.db,
        ctx.actor,
        {
          provider: smsProviderFor(ctx.deps.config, ctx.deps.log),
          from: ctx.deps.config.SMS_FROM_NUMBER,
          log: ctx.log,
          clock: ctx.deps.clock,
          linkBase: ctx.deps.config.BASE_URL,
        },
        input,
      ),
    ),
  list: internalProcedure
    .meta({
      openapi: { method: 'GET', path: '/contacts/{id}/messages', tags: ['Messages'], summary: 'Messages with a contact' },
      errorCodes: ['not_found'],
    })
    .input(ListMessagesInput)
    .output(ListMessagesOutput)
    .query(({ ctx, input }) => listMessages(ctx.db, ctx.actor, input)),
  inbound: providerProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/messages/inbound',
        tags: ['Messages'],
        summary: 'Inbound text from the SMS provider (X-Provider-Secret, not a user credential)',
        protect: false,
      },
      errorCodes: ['unauthorized', 'not_found'],
    })
    .input(InboundSmsInput)
    .output(InboundSmsOutput)
    .mutation(({ ctx, input }) => receiveSms(ctx.db, input, ctx.deps.clock.now())),
});
