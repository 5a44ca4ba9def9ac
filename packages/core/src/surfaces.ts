/*
 * `@leadwire/core/surfaces`: the services behind the server's hand-written routes, those that are not tRPC procedures
 * because they speak HTML, multipart, Server-Sent Events or a browser beacon (apps/server/src/http/*.ts). Each route
 * module takes what it needs from here and nothing else of the package's inside.
 */
export { authenticateInternal, requireRole } from './auth/internal.ts';
export { callerOf } from './replicas/routing.ts';
export { acceptInvite, INVITE_PREFIX } from './accounts/invites.ts';
export { RESET_PREFIX, resetPassword } from './accounts/password.service.ts';
export { AcceptInviteInput, ResetPasswordInput } from './accounts/schemas.ts';
export type { Client } from './accounts/sign-in.ts';
export { CAPTURE_MAX_BYTES } from './capture/schemas.ts';
export { captureErrors, captureLead, parseCaptureBody } from './capture/service.ts';
export { confirmLink, readConfirmLink, readWithdrawLink, withdrawLink } from './consent/service.ts';
export { scannerFor } from './files/clamav.ts';
export { fileErrors } from './files/errors.ts';
export { contentDisposition } from './files/names.ts';
export type { FileView } from './files/schemas.ts';
export { type FileDeps, type FileKind, openFile, openPhoto, UPLOAD_LIMITS, uploadContactFile } from './files/service.ts';
export { storageFor } from './files/storage.ts';
export { loadPublishedForm, type PublishedForm, redirectTarget, submitToForm, thankYouOf } from './forms/intake.ts';
export type { FormField } from './forms/schemas.ts';
export { type FormRow, formUrls } from './forms/service.ts';
export { followLink } from './tracking/links.ts';
export { PAGE_VIEW_MAX_BYTES } from './tracking/schemas.ts';
export { parsePageView, recordPageView, trackingErrors } from './tracking/service.ts';
export { CUSTOM_EVENT_MAX_BYTES, customEventErrors, parseCustomEvent, recordCustomEvent } from './tracking/events.ts';
export { existingListenHub, listenHubOf } from './webhooks/listen/hub.ts';
export { parseListenEvents } from './webhooks/listen/schemas.ts';
