import { PUBLIC_API_PER_MINUTE } from '../limits/plans.ts';

/** The `info.description` of the contract: the rules a client needs that the schemas alone cannot say. */
export function apiDescription(serverUrl: string): string {
  return `
Push contacts, companies, leads and notes into Leadwire. Every write is an upsert matched on a natural key, so
re-sending the same rows is safe. Base URL: \`${serverUrl}\`. Request and response bodies are JSON
(\`Content-Type: application/json\`, at most 1 MB). This contract is served at \`${serverUrl}/docs/json\` and its
reference at \`${serverUrl}/docs\`.

## Authentication

Send a **Public API key** on every call: \`Authorization: Bearer ck_live_...\`. Each operation needs one permission,
ticked when the key was created; the operation lists it under its security requirement.

| Permission | What it allows |
|---|---|
| \`contacts:read\` | Read contacts: \`GET /contacts\`, \`GET /contacts/{id}\`, \`GET /contacts/search\`; and the contact events (\`contact.*\`) in \`GET /events\` |
| \`contacts:write\` | Create and update contacts: \`POST /contacts/upsert\`, \`POST /contacts/batch-upsert\` |
| \`companies:read\` | Read companies: \`GET /companies\`, \`GET /companies/{id}\`, \`GET /companies/search\` |
| \`companies:write\` | Create and update companies: \`POST /companies/upsert\` |
| \`leads:write\` | Create leads (a contact placed on a pipeline): \`POST /leads\` |
| \`notes:write\` | Add notes to contacts: \`POST /contacts/{id}/notes\` |
| \`events:read\` | Read every event of the workspace, of every kind of record: \`GET /events\` |

The changes feed (\`GET /events\`) takes either of two: \`events:read\` reads every event, \`contacts:read\` the
contact events only; each is a security requirement of its own, and a refusal names \`events:read\`.

- Missing, malformed, unknown, revoked or expired key, or its owner deactivated or changed password: **401 \`unauthorized\`**.
- An Internal key on /v1: **403 \`wrong_api_surface\`**.
- A permission missing: **403 \`insufficient_scope\`**, with the permission in \`required\`.

Revocation and owner changes take effect on the very next request.

## Errors

Every error is a JSON object \`{ "error": "<human message>", "code": "<identifier>" }\`. \`code\` is stable: branch on
it. \`error\` is for people and its wording may change. Some codes add fields: \`issues: [{ path, message }]\` on
\`validation_failed\`, \`required\` on \`insufficient_scope\`, \`domain\` on \`company_not_found\`. Each operation lists
the codes it can answer with, by status, with examples.

| Status | Codes |
|---|---|
| 400 | \`validation_failed\`, \`missing_identity\`, \`malformed_json\`, \`invalid_cursor\` (a cursor the list did not return: made up, altered, or another list's) |
| 401 | \`unauthorized\` |
| 403 | \`wrong_api_surface\`, \`insufficient_scope\`, \`contact_limit_reached\` |
| 404 | \`not_found\` (also for an unknown path) |
| 405 | \`method_not_allowed\` (wrong method on a known path; \`Allow\` lists the right one) |
| 409 | \`idempotency_key_reused\`, \`idempotency_in_progress\` |
| 413 | \`payload_too_large\` |
| 415 | \`unsupported_media_type\` |
| 422 | \`company_not_found\` |
| 429 | \`rate_limited\` |
| 500 | \`internal_error\`, \`save_failed\` |

Every response carries \`x-request-id\`, and every error body the same id as \`requestId\`: your \`X-Request-Id\` when it is 1-128 characters of letters, digits and \`_ . : -\`, else one the server made. Quote it when asking for help.

## Rate limits

${PUBLIC_API_PER_MINUTE} requests per minute per API key, counted in fixed windows that start on the minute and are
shared by every server. Every authenticated request counts, failed ones included. Responses carry
\`x-ratelimit-limit\`, \`x-ratelimit-remaining\` and \`x-ratelimit-reset\` (whole **seconds until the window resets**,
not a timestamp). Beyond the limit the answer is **429 \`rate_limited\`** with \`retry-after\` in seconds.

## Idempotency

Any POST may carry \`Idempotency-Key: <unique string>\` (1-255 printable ASCII characters; a UUID is ideal). The first
successful response is stored for **24 hours** and replayed to retries with the same key and the same request, marked
\`idempotent-replayed: true\`; nothing is written twice. The same key with a different body (keys in another order are
the same body) or a different \`X-Source\` gives **409 \`idempotency_key_reused\`**; while the first request still runs,
**409 \`idempotency_in_progress\`**. Errors are not stored, so a corrected retry runs. Keys are scoped to the API key.

## Reading and reconciling

\`GET /contacts\` and \`GET /companies\` list records oldest change first, by \`updatedAt\` then \`id\`, in pages of
\`limit\` (1-100, default 25). Pass a page's \`nextCursor\` as \`cursor\` for the next page; \`nextCursor\` is null on the
last one. A record changed while you page moves to the end and is listed again: keep the latest \`updatedAt\` per
\`id\`. To sync again later, pass \`updatedSince\` (inclusive, to the microsecond) **a minute before** the greatest
\`updatedAt\` you saw: a change is stamped when its write starts and listed once it commits, seconds later at most, so
the overlap catches a write that was still committing when you read; the few records read twice de-duplicate on
\`id\`. For every change in commit order, with none skipped, follow \`GET /events\`. Trashed and deleted contacts are not listed: their
\`contact.deleted\` events are. A contact item is exactly the \`data.contact\` of contact events. A cursor that is not
one this list returned (another list's included) is **400 \`invalid_cursor\`**. These read routes and \`GET /events\` refuse query parameters they do not take
(**400 \`validation_failed\`** naming them), so a misspelt filter never lists everything; the routes that came before
them keep ignoring unknown parameters.

## Upsert semantics

- **Omitted fields are left untouched; \`null\` clears a field.** Fields sent overwrite the stored value.
- **Tags are only added**, never removed (matched case-insensitively, so \`VIP\` and \`vip\` are one tag).
- **\`custom\` is merged key by key**: keys sent replace their value, a key sent as \`null\` is removed, other keys stay.
- An existing email is never replaced; emails are matched lowercased and trimmed.
- A contact needs an email, or \`companyDomain\` with \`firstName\` and \`lastName\` (else 400 \`missing_identity\`).
  Matching is by email first, then by the same first and last name at the same company; the oldest match wins.
- \`companyDomain\` links to an **existing** company (422 \`company_not_found\` otherwise); it never creates one.
  Domains are normalised to the bare lowercase host (\`https://www.Example.com/x\` is \`example.com\`).
- \`source\` (or the \`X-Source\` header; the body's \`source\` wins when both are present) applies to new contacts
  only, default \`api\`. Marketing consent is never set by the API.
- Each contact upsert emits \`contact.created\` or \`contact.updated\` with source \`api\`.

## Versioning and deprecation

/v1 changes only additively: new operations, new optional inputs, new response fields, new error codes for new
conditions. Nothing is removed, renamed, narrowed or made required within /v1; that needs /v2. Every change is listed
in the changelog. An operation or field to be removed is first **deprecated**: announced in the changelog, marked
\`deprecated: true\` in this document, and every answer that uses it carries \`Deprecation: @<unix seconds>\`
(RFC 9745), \`Sunset: <HTTP date>\` (RFC 8594) and \`Link: <notice>; rel="deprecation"\`, at least 180 days before
the sunset. It keeps working until then.

## Choices where the product specification is silent

- \`error\` carries the human message and \`code\` the identifier.
- Invalid bodies, queries, paths and headers are **400 \`validation_failed\`**; a body that is not JSON is
  400 \`malformed_json\`, over 1 MB 413 \`payload_too_large\`, not JSON-typed (or declared in a charset other
  than UTF-8) 415 \`unsupported_media_type\`; a query string whose escapes are not UTF-8 is 400 \`malformed_url\`.
- An unknown \`companyDomain\` is 422 \`company_not_found\`; a full plan contact cap is 403 \`contact_limit_reached\`.
- \`x-ratelimit-reset\` is in whole seconds until the window resets.
- Adding a note answers **201** with the note; a company upsert answers \`{ id, created, domain }\`.
- A lead needs only the contact identity; \`score\` becomes the contact's manual score, which wins over the computed
  one. A contact already on the pipeline keeps its place (its existing \`pipelineItemId\` is returned).
- \`POST /contacts/batch-upsert\` (up to 100 contacts, each row succeeding or failing on its own) is an addition.
`.trim();
}
