import { z } from 'zod';
import { defineEvent, EventContactRef, EX, EXAMPLE_CONTACT_REF } from '../payload.ts';

/*
 * Form intake and tracking: the contract of events whose emitters arrive with the form and tracking features. The
 * catalogue test checks every event the code emits against these schemas, so an emitter has to fit them.
 */

const contactOrNull = EventContactRef.nullable().meta({ description: 'The known contact, or null for an anonymous visitor.' });
const email = z.object({ id: z.uuid(), subject: z.string().nullable() }).meta({ description: 'The email that was tracked.' });
const EXAMPLE_EMAIL = { id: EX.message, subject: 'Your proposal from Leadwire' };

export const captureEvents = [
  defineEvent({
    name: 'form.submitted',
    label: 'Form submitted',
    description:
      'A form was submitted: a hosted form, an embedded one, or a form captured by the lead-capture script. `fields` are the submitted values as sent; `contact` is the contact the submission was matched to or created as.',
    data: z.object({
      form: z.object({ id: z.uuid(), name: z.string() }),
      submission: z.object({
        id: z.uuid(),
        fields: z.record(z.string(), z.unknown()),
        pageUrl: z.string().nullable().meta({ description: 'The page the form was on, when known.' }),
        attribution: z
          .object({ utm: z.record(z.string(), z.string()), referrer: z.string().nullable(), landingPage: z.string().nullable() })
          .meta({ description: 'The `utm_*` parameters (without the prefix), `_referrer` and `_landingPage` the submission carried.' }),
      }),
      contact: contactOrNull,
    }),
    source: 'inbound',
    exampleData: {
      form: { id: EX.form, name: 'Contact us' },
      submission: {
        id: EX.submission,
        fields: { email: 'ada@example.com', firstName: 'Ada', message: 'Please call me back.' },
        pageUrl: 'https://www.example.com/contact',
        attribution: {
          utm: { source: 'newsletter', campaign: 'spring' },
          referrer: 'https://www.google.com/',
          landingPage: 'https://www.example.com/contact',
        },
      },
      contact: EXAMPLE_CONTACT_REF,
    },
  }),
  defineEvent({
    name: 'tracking.email_opened',
    label: 'Email opened',
    description: 'A contact opened a tracked email (each open; mail clients that prefetch images open it too).',
    data: z.object({ email, contact: EventContactRef }),
    source: 'inbound',
    exampleData: { email: EXAMPLE_EMAIL, contact: EXAMPLE_CONTACT_REF },
  }),
  defineEvent({
    name: 'tracking.link_clicked',
    label: 'Link clicked',
    description:
      "A contact followed a tracked link to the organization's own site in an email or a text Leadwire sent (link previews that only ask for the headers do not count). `email` or `message` names what the link was in.",
    data: z.object({
      email: email.nullable(),
      message: z
        .object({ id: z.uuid() })
        .nullable()
        .meta({ description: 'The text message the link was in; null for an email (or a deleted message).' }),
      url: z.string().meta({ description: 'The link clicked, as it was written.' }),
      contact: EventContactRef,
    }),
    source: 'inbound',
    exampleData: { email: null, message: { id: EX.message }, url: 'https://www.example.com/pricing', contact: EXAMPLE_CONTACT_REF },
  }),
  defineEvent({
    name: 'tracking.page_visited',
    label: 'Page visited',
    description: 'The tracking snippet recorded a page view; `contact` is set when the visitor is a known contact.',
    data: z.object({
      visit: z.object({
        url: z.string(),
        title: z.string().nullable(),
        referrer: z.string().nullable(),
        visitorId: z.string().meta({ description: "The snippet's anonymous visitor id." }),
      }),
      contact: contactOrNull,
    }),
    source: 'inbound',
    exampleData: {
      visit: { url: 'https://www.example.com/pricing', title: 'Pricing', referrer: 'https://www.google.com/', visitorId: 'v_8f3a2c91d4' },
      contact: EXAMPLE_CONTACT_REF,
    },
  }),
  defineEvent({
    name: 'tracking.custom_event',
    label: 'Custom website event',
    description:
      "A page with the tracking snippet called `leadwire.track(name, props)` for a known contact (a sign-up, a video played, a plan chosen). Anonymous visitors' events are counted as goals, not sent.",
    data: z.object({
      customEvent: z.object({
        name: z.string().meta({ description: 'As the page named it: 1-64 letters, digits, `_ . : -`.' }),
        props: z
          .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))
          .meta({ description: 'At most 10 props of scalar values, as the page sent them; `{}` when none.' }),
        url: z.string().meta({ description: 'The page it happened on (without `?email=` and `?c=`).' }),
        visitorId: z.string().meta({ description: "The snippet's anonymous visitor id." }),
      }),
      contact: EventContactRef,
    }),
    source: 'inbound',
    exampleData: {
      customEvent: { name: 'signup', props: { plan: 'pro', seats: 3 }, url: 'https://www.example.com/pricing', visitorId: 'v_8f3a2c91d4' },
      contact: EXAMPLE_CONTACT_REF,
    },
  }),
] as const;
