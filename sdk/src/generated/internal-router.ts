/**
 * The router type of Leadwire's application surface (`{base_url}/trpc`) for `@leadwire/sdk/internal`: every procedure
 * with its input and output as plain types, generated from the server's router by the TypeScript checker. Do not edit:
 * run `npm run sdk:generate` after changing a procedure (sdk/test/internal-router.test-d.ts fails the type check
 * until then).
 */
import type { TRPCBuiltRouter, TRPCMutationProcedure, TRPCQueryProcedure } from '@trpc/server';
type Shape1 = { token: string; expiresAt: string; user: { id: string; orgId: string; email: string; name: string | null; role: "owner" | "admin" | "member"; }; };
type Shape2 = { id: string; email: string; name: string | null; role: "owner" | "admin" | "member"; active: boolean; createdAt: string; };
type Shape3 = { id: string; domain: string; name: string | null; industry: string | null; size: string | null; custom: Record<string, unknown>; createdAt: string; updatedAt: string; };
type Shape4 = { id: string; email: string | null; firstName: string | null; lastName: string | null; phone: string | null; jobTitle: string | null; tags: string[]; leadScore: number; stage: string; website: string | null; linkedin: string | null; custom: Record<string, unknown>; source: string; scoreOverride: number | null; company: { id: string; name: string | null; domain: string; } | null; emailConsent: boolean; smsConsent: boolean; createdAt: string; updatedAt: string; };
type Shape5 = { id: string; name: string; fields: { id: string; label: string; type: "number" | "email" | "url" | "text" | "tel" | "textarea" | "select" | "checkbox"; required: boolean; options?: string[] | undefined; }[]; published: boolean; pipelineId: string | null; captcha: { provider: "turnstile" | "hcaptcha" | "recaptcha"; siteKey: string; secretSet: true; } | null; thankYou: { message: string; } | { redirectUrl: string; } | null; consent: { doubleOptIn: boolean; purposes: { purpose: string; text: string; version: string; required: boolean; field: string; }[]; } | null; submitUrl: string; embedUrl: string; hostedUrl: string; embedSnippet: string; createdAt: string; updatedAt: string; };
type Shape6 = { id: string; conversationId: string; contactId: string; direction: "inbound" | "outbound"; channel: string; from: string; to: string; body: string; status: "queued" | "sent" | "failed" | "received"; providerMessageId: string | null; createdAt: string; };
type Shape7 = { id: string; contactId: string; kind: string; summary: string; payload: Record<string, unknown>; status: "pending" | "approved" | "rejected"; decidedBy: string | null; decidedAt: string | null; reason: string | null; createdAt: string; };
type Shape8 = { id: string; contactId: string; title: string | null; startsAt: string; endsAt: string; status: "confirmed" | "cancelled"; cancelledAt: string | null; createdAt: string; };
type Shape9 = { id: string; contactId: string; pipelineId: string; stageId: string; title: string; valueCents: number | null; currency: string; status: "open" | "won" | "lost"; closedAt: string | null; createdAt: string; updatedAt: string; };
type Shape10 = { id: string; name: string; isDefault: boolean; createdAt: string; stages: { id: string; name: string; position: number; }[]; };
type Shape11 = { id: string; title: string; dueAt: string | null; assigneeId: string | null; contactId: string | null; completedAt: string | null; createdAt: string; updatedAt: string; };
type Shape12 = { deliveryId: string; event: string; state: "pending" | "skipped"; skipReason: string | null; };
type Shape13 = { id: string; url: string; events: string[]; description: string | null; filter: Record<string, unknown> | null; enabled: boolean; disabledReason: string | null; failureCount: number; secret: string; previousSecretExpiresAt: string | null; createdAt: string; updatedAt: string; };
type Shape14 = { id: string; event: string; timestamp: string; data: Record<string, unknown>; source?: "api" | "ai" | "sync" | "inbound" | "app" | "zapier" | "import" | "automation" | "system" | "partner" | undefined; }[];
type Shape15 = { id: string; name: string; trigger: "webhook_received"; steps: { action: "send_sms" | "update_contact" | "create_deal" | "create_task" | "add_tag"; input: Record<string, unknown>; }[]; enabled: boolean; intakeUrlHint: string; createdAt: string; updatedAt: string; };
type Shape16 = { id: string; name: string; trigger: "webhook_received"; steps: { action: "send_sms" | "update_contact" | "create_deal" | "create_task" | "add_tag"; input: Record<string, unknown>; }[]; enabled: boolean; intakeUrlHint: string; createdAt: string; updatedAt: string; intakeUrl: string; };
/** The error shape of the application surface: `data.code`, `data.httpStatus` and `data.body` (`{ error, code }`). */
type InternalErrorShape = { code: -32700 | -32600 | -32603 | -32001 | -32002 | -32003 | -32004 | -32005 | -32008 | -32009 | -32012 | -32013 | -32015 | -32022 | -32028 | -32029 | -32099; message: string; data: { code: "PARSE_ERROR" | "BAD_REQUEST" | "INTERNAL_SERVER_ERROR" | "NOT_IMPLEMENTED" | "BAD_GATEWAY" | "SERVICE_UNAVAILABLE" | "GATEWAY_TIMEOUT" | "UNAUTHORIZED" | "PAYMENT_REQUIRED" | "FORBIDDEN" | "NOT_FOUND" | "METHOD_NOT_SUPPORTED" | "TIMEOUT" | "CONFLICT" | "PRECONDITION_FAILED" | "PAYLOAD_TOO_LARGE" | "UNSUPPORTED_MEDIA_TYPE" | "UNPROCESSABLE_CONTENT" | "PRECONDITION_REQUIRED" | "TOO_MANY_REQUESTS" | "CLIENT_CLOSED_REQUEST"; httpStatus: number; body: { error: string; code: "validation_failed" | "missing_identity" | "malformed_json" | "malformed_url" | "bad_request" | "invalid_cursor" | "invalid_token" | "malformed_multipart" | "file_missing" | "captcha_failed" | "unauthorized" | "invalid_credentials" | "wrong_api_surface" | "insufficient_scope" | "contact_limit_reached" | "forbidden_role" | "wrong_password" | "user_deactivated" | "session_required" | "confirmation_required" | "csrf_failed" | "not_found" | "method_not_allowed" | "request_timeout" | "restore_window_expired" | "consent_link_expired" | "idempotency_key_reused" | "idempotency_in_progress" | "email_exists" | "company_exists" | "not_in_trash" | "email_taken" | "user_inactive" | "last_owner" | "cannot_deactivate_self" | "sms_consent_required" | "contact_has_no_phone" | "webhook_url_refused" | "concurrent_update" | "pipeline_name_taken" | "stage_name_taken" | "pipeline_has_deals" | "stage_has_deals" | "stage_has_leads" | "ai_action_already_decided" | "payload_too_large" | "file_too_large" | "too_many_parts" | "unsupported_media_type" | "unsupported_content_encoding" | "unsupported_file_type" | "headers_too_large" | "company_not_found" | "stage_not_in_pipeline" | "no_default_pipeline" | "pipeline_has_no_stages" | "assignee_inactive" | "stage_limit_reached" | "invalid_stage_order" | "file_infected" | "pipeline_not_found" | "hook_url_refused" | "rate_limited" | "too_many_attempts" | "too_many_connections" | "internal_error" | "save_failed" | "service_unavailable" | "scanner_unavailable" | "captcha_unavailable" | "snippet_not_built"; } & Record<string, unknown>; path?: string | undefined; stack?: string | undefined; }; };
/** Every procedure of Leadwire's application surface, with its input and output (generated from the server's router). */
export type InternalRouter = TRPCBuiltRouter<
  { ctx: object; meta: object; errorShape: InternalErrorShape; transformer: false },
  {
    accounts: {
      /** Create an organization and its owner, signed in */
      signUp: TRPCMutationProcedure<{ input: { organizationName: string; email: string; password: string; name?: string | undefined; }; output: Shape1; meta: object }>;
      /** Sign in with email and password */
      signIn: TRPCMutationProcedure<{ input: { email: string; password: string; }; output: Shape1; meta: object }>;
      /** End this session */
      signOut: TRPCMutationProcedure<{ input: void; output: { ok: true; }; meta: object }>;
      /** Log out of all devices and stop every API key you created */
      logOutAll: TRPCMutationProcedure<{ input: void; output: { ok: true; }; meta: object }>;
      /** Change your password; ends every other session and your API keys */
      changePassword: TRPCMutationProcedure<{ input: { currentPassword: string; newPassword: string; }; output: Shape1; meta: object }>;
      /** Email a one-time password reset link */
      requestPasswordReset: TRPCMutationProcedure<{ input: { email: string; }; output: { ok: true; }; meta: object }>;
      /** Set a new password with a reset token */
      resetPassword: TRPCMutationProcedure<{ input: { token: string; newPassword: string; }; output: { ok: true; }; meta: object }>;
      /** Re-enter your password to unlock API key creation for 5 minutes */
      confirmPassword: TRPCMutationProcedure<{ input: { password: string; }; output: { keyCreationUnlockedUntil: string; }; meta: object }>;
      /** Invite someone by email as admin or member */
      invite: TRPCMutationProcedure<{ input: { email: string; role: "admin" | "member"; }; output: { id: string; email: string; role: "admin" | "member"; expiresAt: string; }; meta: object }>;
      /** Pending invitations (owners and admins) */
      invites: TRPCQueryProcedure<{ input: void; output: { invites: { id: string; email: string; role: "admin" | "member"; expiresAt: string; createdAt: string; invitedBy: { id: string; email: string; }; }[]; }; meta: object }>;
      /** Accept an invitation: choose a password, join, signed in */
      acceptInvite: TRPCMutationProcedure<{ input: { token: string; password: string; name?: string | undefined; }; output: Shape1; meta: object }>;
      /** The users of your organization */
      members: TRPCQueryProcedure<{ input: void; output: { members: { id: string; email: string; name: string | null; role: "owner" | "admin" | "member"; active: boolean; createdAt: string; }[]; }; meta: object }>;
      /** Change a member’s role (owners only) */
      changeRole: TRPCMutationProcedure<{ input: { userId: string; role: "owner" | "admin" | "member"; }; output: Shape2; meta: object }>;
      /** Deactivate a user: their sessions and API keys stop at once */
      deactivate: TRPCMutationProcedure<{ input: { userId: string; }; output: Shape2; meta: object }>;
      /** Reactivate a user (their old sessions and keys stay ended) */
      reactivate: TRPCMutationProcedure<{ input: { userId: string; }; output: Shape2; meta: object }>;
    };
    activity: {
      /** The workspace's activity: requests, deliveries, submissions and page views, limits in use, failing endpoints */
      overview: TRPCQueryProcedure<{ input: { period?: "24h" | "7d" | "30d" | undefined; }; output: { period: "24h" | "7d" | "30d"; bucket: "hour" | "day"; timeZone: "UTC"; buckets: string[]; api: { subject: string; name: string; outcome: string; counts: number[]; total: number; }[]; deliveries: { subject: string; name: string; outcome: string; counts: number[]; total: number; }[] | null; submissions: { subject: string; name: string; outcome: string; counts: number[]; total: number; }[]; pageViews: { subject: string; name: string; outcome: string; counts: number[]; total: number; }[]; limits: { deliveries: { used: number; limit: number; overCap: number; resetsAt: string; } | null; keys: { id: string; name: string; used: number; limit: number; }[]; contacts: { used: number; limit: number; plan: string; }; }; failing: { id: string; url: string; enabled: boolean; disabledReason: string | null; failureCount: number; failuresUntilDisabled: number; lastFailureAt: string | null; lastError: string | null; }[] | null; }; meta: object }>;
      /** The website's analytics: visitors and page views over time, top pages, referrers, UTM values, identified visitors */
      website: TRPCQueryProcedure<{ input: { period?: "24h" | "7d" | "30d" | undefined; page?: string | undefined; }; output: { period: "24h" | "7d" | "30d"; page: string | null; bucket: "hour" | "day"; timeZone: "UTC"; buckets: string[]; views: number[]; visitors: number[]; totals: { views: number; visitors: number; anonymousViews: number; identified: number; }; pages: { value: string; views: number; visitors: number; }[]; referrers: { value: string; views: number; visitors: number; }[]; utmSources: { value: string; views: number; visitors: number; }[]; utmCampaigns: { value: string; views: number; visitors: number; }[]; contacts: { id: string; email: string | null; name: string | null; views: number; lastSeenAt: string; }[]; }; meta: object }>;
    };
    apiKeys: {
      /** List API keys */
      list: TRPCQueryProcedure<{ input: void; output: { keys: { id: string; name: string; type: "internal" | "public"; permissions: string[]; displayPrefix: string; status: "active" | "revoked" | "expired" | "stopped"; createdAt: string; lastUsedAt: string | null; expiresAt: string | null; revokedAt: string | null; createdBy: { id: string; email: string; }; }[]; }; meta: object }>;
      /** Create an API key */
      create: TRPCMutationProcedure<{ input: { name: string; type: "internal" | "public"; permissions?: ("contacts:read" | "contacts:write" | "companies:read" | "companies:write" | "leads:write" | "notes:write" | "events:read")[] | undefined; expiresInDays?: number | null | undefined; }; output: { id: string; name: string; type: "internal" | "public"; permissions: string[]; displayPrefix: string; status: "active" | "revoked" | "expired" | "stopped"; createdAt: string; lastUsedAt: string | null; expiresAt: string | null; revokedAt: string | null; createdBy: { id: string; email: string; }; value: string; }; meta: object }>;
      /** Revoke an API key */
      revoke: TRPCMutationProcedure<{ input: { id: string; }; output: { id: string; name: string; type: "internal" | "public"; permissions: string[]; displayPrefix: string; status: "active" | "revoked" | "expired" | "stopped"; createdAt: string; lastUsedAt: string | null; expiresAt: string | null; revokedAt: string | null; createdBy: { id: string; email: string; }; }; meta: object }>;
    };
    companies: {
      /** List companies, newest first; `q` searches name and domain */
      list: TRPCQueryProcedure<{ input: { q?: string | undefined; limit?: number | undefined; cursor?: string | undefined; }; output: { items: { id: string; domain: string; name: string | null; industry: string | null; size: string | null; custom: Record<string, unknown>; createdAt: string; updatedAt: string; }[]; nextCursor: string | null; }; meta: object }>;
      /** A company */
      get: TRPCQueryProcedure<{ input: { id: string; }; output: Shape3; meta: object }>;
      /** Create a company (409 company_exists when the domain is taken) */
      create: TRPCMutationProcedure<{ input: { domain: string; name?: string | null | undefined; industry?: string | null | undefined; size?: string | null | undefined; custom?: unknown; }; output: Shape3; meta: object }>;
    };
    contacts: {
      /** List live contacts: filters, sorting, cursor pages of 25 (at most 100) */
      list: TRPCQueryProcedure<{ input: { limit?: unknown; cursor?: string | undefined; stage?: string | undefined; tag?: string | undefined; source?: string | undefined; q?: string | undefined; email?: string | undefined; sort?: "createdAt" | "updatedAt" | "leadScore" | "lastName" | undefined; order?: "asc" | "desc" | undefined; }; output: { items: { id: string; email: string | null; firstName: string | null; lastName: string | null; phone: string | null; jobTitle: string | null; tags: string[]; leadScore: number; stage: string; website: string | null; linkedin: string | null; custom: Record<string, unknown>; source: string; scoreOverride: number | null; company: { id: string; name: string | null; domain: string; } | null; emailConsent: boolean; smsConsent: boolean; createdAt: string; updatedAt: string; }[]; nextCursor: string | null; }; meta: object }>;
      /** A contact with its consent and the first page of its timeline */
      get: TRPCQueryProcedure<{ input: { id: string; timelineLimit?: unknown; }; output: { contact: { id: string; email: string | null; firstName: string | null; lastName: string | null; phone: string | null; jobTitle: string | null; tags: string[]; leadScore: number; stage: string; website: string | null; linkedin: string | null; custom: Record<string, unknown>; source: string; scoreOverride: number | null; company: { id: string; name: string | null; domain: string; } | null; emailConsent: boolean; smsConsent: boolean; createdAt: string; updatedAt: string; consent: Record<string, { status: "expired" | "pending" | "granted" | "declined" | "withdrawn"; method: "single_opt_in" | "double_opt_in" | "unsubscribe_link"; version: string | null; at: string; }>; }; timeline: { items: ({ body: string; authorId: string | null; id: string; at: string; kind: "note"; } | { event: string; source: string | null; id: string; at: string; kind: "event"; } | { title: string; status: string; valueCents: number | null; currency: string; stage: string | null; id: string; at: string; kind: "deal"; } | { title: string; dueAt: string | null; completedAt: string | null; id: string; at: string; kind: "task"; } | { direction: string; channel: string; body: string; status: string; id: string; at: string; kind: "message"; } | { formId: string | null; formName: string; answers: Record<string, string | number | boolean>; attribution: { utm: Record<string, string>; referrer: string | null; landingPage: string | null; }; id: string; at: string; kind: "form_submission"; } | { url: string; title: string | null; referrer: string | null; id: string; at: string; kind: "page_view"; } | { name: string; props: Record<string, string | number | boolean | null>; url: string; id: string; at: string; kind: "custom_event"; } | { workflowId: string | null; workflowName: string; status: string; steps: { action: string; outcome: "error" | "ok" | null; }[]; finishedAt: string | null; id: string; at: string; kind: "workflow_run"; })[]; nextCursor: string | null; }; }; meta: object }>;
      /** Further pages of a contact timeline, newest first */
      timeline: TRPCQueryProcedure<{ input: { id: string; limit?: unknown; cursor?: string | undefined; }; output: { items: ({ body: string; authorId: string | null; id: string; at: string; kind: "note"; } | { event: string; source: string | null; id: string; at: string; kind: "event"; } | { title: string; status: string; valueCents: number | null; currency: string; stage: string | null; id: string; at: string; kind: "deal"; } | { title: string; dueAt: string | null; completedAt: string | null; id: string; at: string; kind: "task"; } | { direction: string; channel: string; body: string; status: string; id: string; at: string; kind: "message"; } | { formId: string | null; formName: string; answers: Record<string, string | number | boolean>; attribution: { utm: Record<string, string>; referrer: string | null; landingPage: string | null; }; id: string; at: string; kind: "form_submission"; } | { url: string; title: string | null; referrer: string | null; id: string; at: string; kind: "page_view"; } | { name: string; props: Record<string, string | number | boolean | null>; url: string; id: string; at: string; kind: "custom_event"; } | { workflowId: string | null; workflowName: string; status: string; steps: { action: string; outcome: "error" | "ok" | null; }[]; finishedAt: string | null; id: string; at: string; kind: "workflow_run"; })[]; nextCursor: string | null; }; meta: object }>;
      /** Create a contact */
      create: TRPCMutationProcedure<{ input: { tags?: string[] | undefined; source?: string | undefined; stage?: "lead" | "qualified" | "opportunity" | "customer" | "inactive" | undefined; email?: string | null | undefined; firstName?: string | null | undefined; lastName?: string | null | undefined; phone?: string | null | undefined; jobTitle?: string | null | undefined; website?: string | null | undefined; linkedin?: string | null | undefined; companyId?: string | null | undefined; custom?: unknown; emailConsent?: boolean | undefined; smsConsent?: boolean | undefined; }; output: Shape4; meta: object }>;
      /** Update a contact (the email may change, staying unique) */
      update: TRPCMutationProcedure<{ input: { id: string; email?: string | null | undefined; firstName?: string | null | undefined; lastName?: string | null | undefined; phone?: string | null | undefined; jobTitle?: string | null | undefined; website?: string | null | undefined; linkedin?: string | null | undefined; companyId?: string | null | undefined; custom?: unknown; emailConsent?: boolean | undefined; smsConsent?: boolean | undefined; }; output: Shape4; meta: object }>;
      /** Add tags (one contact.tag_added per new tag) */
      addTags: TRPCMutationProcedure<{ input: { id: string; tags: string[]; }; output: Shape4; meta: object }>;
      /** Remove tags (case-insensitive) */
      removeTags: TRPCMutationProcedure<{ input: { id: string; tags: string[]; }; output: Shape4; meta: object }>;
      /** Move a contact to a stage */
      setStage: TRPCMutationProcedure<{ input: { id: string; stage: "lead" | "qualified" | "opportunity" | "customer" | "inactive"; }; output: Shape4; meta: object }>;
      /** Set (0-100) or clear (null) the manual score override */
      setScoreOverride: TRPCMutationProcedure<{ input: { id: string; score: number | null; }; output: Shape4; meta: object }>;
      /** Move a contact to trash (restorable for 30 days) */
      delete: TRPCMutationProcedure<{ input: { id: string; }; output: { id: string; deletedAt: string; purgeAfter: string; }; meta: object }>;
      /** Contacts in trash, most recently deleted first */
      trash: TRPCQueryProcedure<{ input: { limit?: unknown; cursor?: string | undefined; }; output: { items: { id: string; email: string | null; firstName: string | null; lastName: string | null; phone: string | null; jobTitle: string | null; tags: string[]; leadScore: number; stage: string; website: string | null; linkedin: string | null; custom: Record<string, unknown>; source: string; scoreOverride: number | null; company: { id: string; name: string | null; domain: string; } | null; emailConsent: boolean; smsConsent: boolean; createdAt: string; updatedAt: string; deletedAt: string; purgeAfter: string; restorable: boolean; daysLeft: number; }[]; nextCursor: string | null; }; meta: object }>;
      /** Restore a contact from trash (owner or admin, within 30 days) */
      restore: TRPCMutationProcedure<{ input: { id: string; }; output: Shape4; meta: object }>;
      /** Merge duplicates into a primary contact; the duplicates are deleted for good (owner or admin) */
      merge: TRPCMutationProcedure<{ input: { primaryId: string; secondaryIds: string[]; }; output: { contact: { id: string; email: string | null; firstName: string | null; lastName: string | null; phone: string | null; jobTitle: string | null; tags: string[]; leadScore: number; stage: string; website: string | null; linkedin: string | null; custom: Record<string, unknown>; source: string; scoreOverride: number | null; company: { id: string; name: string | null; domain: string; } | null; emailConsent: boolean; smsConsent: boolean; createdAt: string; updatedAt: string; }; mergedIds: string[]; moved: { deals: number; notes: number; tasks: number; conversations: number; messages: number; bookings: number; files: number; workflowRuns: number; pipelineItems: number; aiActions: number; formSubmissions: number; }; skippedPipelineItems: number; }; meta: object }>;
    };
    consents: {
      /** A contact's consent: what holds now and every entry */
      ofContact: TRPCQueryProcedure<{ input: { id: string; }; output: { purposes: { purpose: string; granted: boolean; since: string; method: "single_opt_in" | "double_opt_in" | "unsubscribe_link"; text: string | null; version: string | null; }[]; entries: { id: string; purpose: string; status: "pending" | "granted" | "declined" | "withdrawn"; expired: boolean; method: "single_opt_in" | "double_opt_in" | "unsubscribe_link"; text: string | null; version: string | null; formId: string | null; formName: string | null; pageUrl: string | null; ipHash: string | null; confirms: string | null; expiresAt: string | null; at: string; }[]; }; meta: object }>;
    };
    files: {
      /** Files attached to a contact */
      list: TRPCQueryProcedure<{ input: { id: string; }; output: { files: { id: string; contactId: string; kind: "file" | "photo"; filename: string; contentType: string; size: number; sha256: string; uploadedBy: string | null; createdAt: string; downloadPath: string; }[]; }; meta: object }>;
    };
    forms: {
      /** Forms, newest first */
      list: TRPCQueryProcedure<{ input: { limit?: number | undefined; cursor?: string | undefined; }; output: { items: { id: string; name: string; fields: { id: string; label: string; type: "number" | "email" | "url" | "text" | "tel" | "textarea" | "select" | "checkbox"; required: boolean; options?: string[] | undefined; }[]; published: boolean; pipelineId: string | null; captcha: { provider: "turnstile" | "hcaptcha" | "recaptcha"; siteKey: string; secretSet: true; } | null; thankYou: { message: string; } | { redirectUrl: string; } | null; consent: { doubleOptIn: boolean; purposes: { purpose: string; text: string; version: string; required: boolean; field: string; }[]; } | null; submitUrl: string; embedUrl: string; hostedUrl: string; embedSnippet: string; createdAt: string; updatedAt: string; }[]; nextCursor: string | null; }; meta: object }>;
      /** A form */
      get: TRPCQueryProcedure<{ input: { id: string; }; output: Shape5; meta: object }>;
      /** Create a form */
      create: TRPCMutationProcedure<{ input: { name: string; fields: { id: string; label: string; type: "number" | "email" | "url" | "text" | "tel" | "textarea" | "select" | "checkbox"; required?: boolean | undefined; options?: string[] | undefined; }[]; published?: boolean | undefined; pipelineId?: string | null | undefined; captcha?: { provider: "turnstile" | "hcaptcha" | "recaptcha"; siteKey: string; secret?: string | undefined; } | null | undefined; thankYou?: { message: string; } | { redirectUrl: string; } | null | undefined; consent?: { purposes: { purpose: string; text: string; version: string; required?: boolean | undefined; }[]; doubleOptIn?: boolean | undefined; } | null | undefined; }; output: Shape5; meta: object }>;
      /** Change a form; fields left out keep their values */
      update: TRPCMutationProcedure<{ input: { id: string; name?: string | undefined; fields?: { id: string; label: string; type: "number" | "email" | "url" | "text" | "tel" | "textarea" | "select" | "checkbox"; required?: boolean | undefined; options?: string[] | undefined; }[] | undefined; published?: boolean | undefined; pipelineId?: string | null | undefined; captcha?: { provider: "turnstile" | "hcaptcha" | "recaptcha"; siteKey: string; secret?: string | undefined; } | null | undefined; thankYou?: { message: string; } | { redirectUrl: string; } | null | undefined; consent?: { purposes: { purpose: string; text: string; version: string; required?: boolean | undefined; }[]; doubleOptIn?: boolean | undefined; } | null | undefined; }; output: Shape5; meta: object }>;
      /** A form's submissions, newest first, with their attribution */
      submissions: TRPCQueryProcedure<{ input: { id: string; limit?: number | undefined; cursor?: string | undefined; }; output: { items: { id: string; createdAt: string; contact: { id: string; email: string | null; } | null; answers: Record<string, string | number | boolean>; attribution: { utm: Record<string, string>; referrer: string | null; landingPage: string | null; }; }[]; nextCursor: string | null; }; meta: object }>;
      /** Delete a form (its submissions stay on their contacts) */
      delete: TRPCMutationProcedure<{ input: { id: string; }; output: void; meta: object }>;
    };
    messages: {
      /** Text a contact who consented to SMS */
      send: TRPCMutationProcedure<{ input: { contactId: string; body: string; }; output: Shape6; meta: object }>;
      /** Messages with a contact */
      list: TRPCQueryProcedure<{ input: { id: string; limit?: unknown; }; output: { conversationId: string | null; messages: { id: string; conversationId: string; contactId: string; direction: "inbound" | "outbound"; channel: string; from: string; to: string; body: string; status: "queued" | "sent" | "failed" | "received"; providerMessageId: string | null; createdAt: string; }[]; }; meta: object }>;
      /** Inbound text from the SMS provider (X-Provider-Secret, not a user credential) */
      inbound: TRPCMutationProcedure<{ input: { orgId: string; from: string; to: string; body: string; providerMessageId: string; }; output: { status: "stored" | "duplicate" | "no_matching_contact"; messageId: string | null; conversationId: string | null; }; meta: object }>;
    };
    /** The signed-in user */
    me: TRPCQueryProcedure<{ input: void; output: { userId: string; orgId: string; email: string; name: string | null; role: "owner" | "admin" | "member"; via: "session" | "internal_key"; }; meta: object }>;
    aiActions: {
      /** Suggested actions, newest first, filtered by contact or status */
      list: TRPCQueryProcedure<{ input: { limit?: number | undefined; cursor?: string | undefined; contactId?: string | undefined; status?: "pending" | "approved" | "rejected" | undefined; }; output: { items: { id: string; contactId: string; kind: string; summary: string; payload: Record<string, unknown>; status: "pending" | "approved" | "rejected"; decidedBy: string | null; decidedAt: string | null; reason: string | null; createdAt: string; }[]; nextCursor: string | null; }; meta: object }>;
      /** A suggested action */
      get: TRPCQueryProcedure<{ input: { id: string; }; output: Shape7; meta: object }>;
      /** Suggest an action on a contact (emits ai_action.created, source ai) */
      create: TRPCMutationProcedure<{ input: { contactId: string; kind: string; summary: string; payload?: unknown; }; output: Shape7; meta: object }>;
      /** Approve a pending suggestion (emits ai_action.approved) */
      approve: TRPCMutationProcedure<{ input: { id: string; }; output: Shape7; meta: object }>;
      /** Reject a pending suggestion, optionally saying why (emits ai_action.rejected) */
      reject: TRPCMutationProcedure<{ input: { id: string; reason?: string | null | undefined; }; output: Shape7; meta: object }>;
    };
    bookings: {
      /** Bookings, newest first, filtered by contact or status */
      list: TRPCQueryProcedure<{ input: { limit?: number | undefined; cursor?: string | undefined; contactId?: string | undefined; status?: "confirmed" | "cancelled" | undefined; }; output: { items: { id: string; contactId: string; title: string | null; startsAt: string; endsAt: string; status: "confirmed" | "cancelled"; cancelledAt: string | null; createdAt: string; }[]; nextCursor: string | null; }; meta: object }>;
      /** A booking */
      get: TRPCQueryProcedure<{ input: { id: string; }; output: Shape8; meta: object }>;
      /** Book a contact (emits booking.created; the contact's score gains the +20 booking bonus) */
      create: TRPCMutationProcedure<{ input: { contactId: string; startsAt: string; endsAt: string; title?: string | null | undefined; }; output: Shape8; meta: object }>;
      /** Cancel a booking (emits booking.cancelled once; the last one cancelled removes the booking bonus) */
      cancel: TRPCMutationProcedure<{ input: { id: string; }; output: Shape8; meta: object }>;
    };
    deals: {
      /** Deals, newest first, filtered by pipeline, stage, contact or status */
      list: TRPCQueryProcedure<{ input: { limit?: number | undefined; cursor?: string | undefined; pipelineId?: string | undefined; stageId?: string | undefined; contactId?: string | undefined; status?: "open" | "won" | "lost" | undefined; }; output: { items: { id: string; contactId: string; pipelineId: string; stageId: string; title: string; valueCents: number | null; currency: string; status: "open" | "won" | "lost"; closedAt: string | null; createdAt: string; updatedAt: string; }[]; nextCursor: string | null; }; meta: object }>;
      /** A deal */
      get: TRPCQueryProcedure<{ input: { id: string; }; output: Shape9; meta: object }>;
      /** Create a deal for a contact (emits deal.created) */
      create: TRPCMutationProcedure<{ input: { contactId: string; title: string; pipelineId?: string | undefined; stageId?: string | undefined; valueCents?: number | null | undefined; currency?: string | undefined; }; output: Shape9; meta: object }>;
      /** Change a deal: fields (deal.updated), stage (deal.stage_changed), status (deal.won, deal.lost) */
      update: TRPCMutationProcedure<{ input: { id: string; title?: string | undefined; valueCents?: number | null | undefined; currency?: string | undefined; pipelineId?: string | undefined; stageId?: string | undefined; status?: "open" | "won" | "lost" | undefined; }; output: Shape9; meta: object }>;
    };
    nonprofit: {
      /** Nonprofit activation and verification history (owner or admin) */
      status: TRPCQueryProcedure<{ input: void; output: { nonprofitActivatedAt: string | null; verifications: { id: string; status: "rejected" | "verified"; registrationNumber: string | null; evidence: Record<string, unknown>; recordedBy: string | null; createdAt: string; }[]; }; meta: object }>;
      /** Record a nonprofit verification (owner or admin); the first verified one activates the nonprofit plan */
      recordVerification: TRPCMutationProcedure<{ input: { status: "rejected" | "verified"; registrationNumber?: string | null | undefined; evidence?: unknown; }; output: { verification: { id: string; status: "rejected" | "verified"; registrationNumber: string | null; evidence: Record<string, unknown>; recordedBy: string | null; createdAt: string; }; nonprofitActivatedAt: string | null; activated: boolean; }; meta: object }>;
    };
    pipelines: {
      /** Pipelines with their stages, the default first */
      list: TRPCQueryProcedure<{ input: void; output: { items: { id: string; name: string; isDefault: boolean; createdAt: string; stages: { id: string; name: string; position: number; }[]; }[]; }; meta: object }>;
      /** A pipeline with its stages */
      get: TRPCQueryProcedure<{ input: { id: string; }; output: Shape10; meta: object }>;
      /** Create a pipeline (owner or admin) */
      create: TRPCMutationProcedure<{ input: { name: string; stages?: string[] | undefined; isDefault?: boolean | undefined; }; output: Shape10; meta: object }>;
      /** Rename a pipeline (owner or admin) */
      rename: TRPCMutationProcedure<{ input: { id: string; name: string; }; output: Shape10; meta: object }>;
      /** Make a pipeline the default (owner or admin) */
      setDefault: TRPCMutationProcedure<{ input: { id: string; }; output: Shape10; meta: object }>;
      /** Delete a pipeline without deals (owner or admin); 409 pipeline_has_deals otherwise */
      delete: TRPCMutationProcedure<{ input: { id: string; }; output: { id: string; deleted: true; }; meta: object }>;
      /** Add a stage (owner or admin) */
      addStage: TRPCMutationProcedure<{ input: { id: string; name: string; position?: number | undefined; }; output: Shape10; meta: object }>;
      /** Rename a stage (owner or admin) */
      renameStage: TRPCMutationProcedure<{ input: { id: string; stageId: string; name: string; }; output: Shape10; meta: object }>;
      /** Put the stages in a new order (owner or admin) */
      reorderStages: TRPCMutationProcedure<{ input: { id: string; stageIds: string[]; }; output: Shape10; meta: object }>;
      /** Remove a stage without deals (owner or admin); its lead placements move to the previous stage */
      removeStage: TRPCMutationProcedure<{ input: { id: string; stageId: string; }; output: Shape10; meta: object }>;
    };
    tasks: {
      /** Tasks, newest first, filtered by contact, assignee or status */
      list: TRPCQueryProcedure<{ input: { limit?: number | undefined; cursor?: string | undefined; contactId?: string | undefined; assigneeId?: string | undefined; status?: "open" | "completed" | undefined; }; output: { items: { id: string; title: string; dueAt: string | null; assigneeId: string | null; contactId: string | null; completedAt: string | null; createdAt: string; updatedAt: string; }[]; nextCursor: string | null; }; meta: object }>;
      /** A task */
      get: TRPCQueryProcedure<{ input: { id: string; }; output: Shape11; meta: object }>;
      /** Create a task (emits task.created) */
      create: TRPCMutationProcedure<{ input: { title: string; dueAt?: string | null | undefined; assigneeId?: string | null | undefined; contactId?: string | null | undefined; }; output: Shape11; meta: object }>;
      /** Change title, due date, assignee or contact */
      update: TRPCMutationProcedure<{ input: { id: string; title?: string | undefined; dueAt?: string | null | undefined; assigneeId?: string | null | undefined; contactId?: string | null | undefined; }; output: Shape11; meta: object }>;
      /** Complete a task (emits task.completed once; repeats are no-ops) */
      complete: TRPCMutationProcedure<{ input: { id: string; }; output: Shape11; meta: object }>;
    };
    tracking: {
      /** The tracking and lead-capture snippets, filled with the workspace id and this server's address */
      snippets: TRPCQueryProcedure<{ input: void; output: { organizationId: string; tracking: string; leadCapture: string; }; meta: object }>;
      /** The website's goals: custom events (`leadwire.track`) of the last days by name, anonymous ones counted apart */
      goals: TRPCQueryProcedure<{ input: { days?: number | undefined; }; output: { since: string; items: { name: string; total: number; anonymous: number; }[]; }; meta: object }>;
      /** Tracking settings of the organization */
      settings: TRPCQueryProcedure<{ input: void; output: { siteDomain: string | null; }; meta: object }>;
      /** Set the site domain whose links are tracked (owner or admin) */
      updateSettings: TRPCMutationProcedure<{ input: { siteDomain: string | null; }; output: { siteDomain: string | null; }; meta: object }>;
    };
    webhooks: {
      /** Send an event's example to your listen streams, and optionally to one endpoint (owner or admin) */
      trigger: TRPCMutationProcedure<{ input: { event: "contact.created" | "contact.updated" | "contact.deleted" | "contact.stage_changed" | "contact.score_changed" | "contact.tag_added" | "contact.consent_changed" | "deal.created" | "deal.updated" | "deal.won" | "deal.lost" | "deal.stage_changed" | "message.sent" | "message.received" | "conversation.created" | "task.created" | "task.completed" | "booking.created" | "booking.cancelled" | "form.submitted" | "ai_action.created" | "ai_action.approved" | "ai_action.rejected" | "tracking.email_opened" | "tracking.link_clicked" | "tracking.page_visited" | "tracking.custom_event" | "nonprofit.verification_recorded" | "nonprofit.activated" | "ping" | "webhook.endpoint_disabled" | "webhook.endpoint_enabled" | "webhook.delivery_failed" | "webhook.limit_reached"; endpointId?: string | undefined; }; output: { id: string; event: string; payload: { id: string; event: string; timestamp: string; data: Record<string, unknown>; source?: string | undefined; }; listening: boolean; delivery: { deliveryId: string; event: string; state: "pending" | "skipped"; skipReason: string | null; } | null; synthetic: true; }; meta: object }>;
      /** Send a ping event to this endpoint (owner or admin) */
      test: TRPCMutationProcedure<{ input: { id: string; }; output: Shape12; meta: object }>;
      /** The delivery log: every attempt, newest first (owner or admin) */
      deliveries: TRPCQueryProcedure<{ input: { id: string; limit?: number | undefined; cursor?: string | undefined; outcome?: "succeeded" | "failed" | "skipped" | "filtered" | "blocked" | undefined; event?: string | undefined; since?: string | undefined; until?: string | undefined; search?: string | undefined; }; output: { items: { id: string; at: string; event: string; deliveryId: string; messageId: string; attempt: number; outcome: "succeeded" | "failed" | "skipped" | "filtered" | "blocked"; statusCode: number | null; responseBody: string | null; durationMs: number | null; error: string | null; nextAttemptAt: string | null; manual: boolean; requestId: string | null; }[]; nextCursor: string | null; }; meta: object }>;
      /** One attempt of the delivery log: what was sent and what came back (owner or admin) */
      attempt: TRPCQueryProcedure<{ input: { id: string; attemptId: string; }; output: { id: string; at: string; event: string; deliveryId: string; messageId: string; attempt: number; outcome: "succeeded" | "failed" | "skipped" | "filtered" | "blocked"; statusCode: number | null; responseBody: string | null; durationMs: number | null; error: string | null; nextAttemptAt: string | null; manual: boolean; requestId: string | null; eventId: string | null; request: { method: "POST"; url: string | null; headers: Record<string, string> | null; body: string; }; response: { statusCode: number | null; headers: [string, string][] | null; body: string | null; }; next: { at: string | null; why: string; }; }; meta: object }>;
      /** Send a delivery again (owner or admin) */
      redeliver: TRPCMutationProcedure<{ input: { id: string; deliveryId: string; }; output: Shape12; meta: object }>;
      /** Replay every delivery that failed or was skipped since a time (owner or admin) */
      recover: TRPCMutationProcedure<{ input: { id: string; since: string; }; output: { replayed: number; remaining: number; }; meta: object }>;
      /** Webhook endpoints, newest first (owner or admin) */
      list: TRPCQueryProcedure<{ input: { limit?: number | undefined; cursor?: string | undefined; }; output: { items: { id: string; url: string; events: string[]; description: string | null; filter: Record<string, unknown> | null; enabled: boolean; disabledReason: string | null; failureCount: number; secret: string; previousSecretExpiresAt: string | null; createdAt: string; updatedAt: string; }[]; nextCursor: string | null; }; meta: object }>;
      /** Try a delivery filter against the workspace's recent events (owner or admin) */
      previewFilter: TRPCMutationProcedure<{ input: { filter: Record<string, unknown> | null; events?: ("contact.created" | "contact.updated" | "contact.deleted" | "contact.stage_changed" | "contact.score_changed" | "contact.tag_added" | "contact.consent_changed" | "deal.created" | "deal.updated" | "deal.won" | "deal.lost" | "deal.stage_changed" | "message.sent" | "message.received" | "conversation.created" | "task.created" | "task.completed" | "booking.created" | "booking.cancelled" | "form.submitted" | "ai_action.created" | "ai_action.approved" | "ai_action.rejected" | "tracking.email_opened" | "tracking.link_clicked" | "tracking.page_visited" | "tracking.custom_event" | "nonprofit.verification_recorded" | "nonprofit.activated" | "webhook.endpoint_disabled" | "webhook.endpoint_enabled" | "webhook.delivery_failed" | "webhook.limit_reached")[] | undefined; limit?: number | undefined; }; output: { items: { id: string; event: string; timestamp: string; matched: boolean; data: Record<string, unknown>; }[]; matched: number; scanned: number; }; meta: object }>;
      /** A webhook endpoint with its signing secret (owner or admin) */
      get: TRPCQueryProcedure<{ input: { id: string; }; output: Shape13; meta: object }>;
      /** Register a webhook endpoint (owner or admin) */
      create: TRPCMutationProcedure<{ input: { url: string; events: ("*" | "contact.created" | "contact.updated" | "contact.deleted" | "contact.stage_changed" | "contact.score_changed" | "contact.tag_added" | "contact.consent_changed" | "deal.created" | "deal.updated" | "deal.won" | "deal.lost" | "deal.stage_changed" | "message.sent" | "message.received" | "conversation.created" | "task.created" | "task.completed" | "booking.created" | "booking.cancelled" | "form.submitted" | "ai_action.created" | "ai_action.approved" | "ai_action.rejected" | "tracking.email_opened" | "tracking.link_clicked" | "tracking.page_visited" | "tracking.custom_event" | "nonprofit.verification_recorded" | "nonprofit.activated" | "webhook.endpoint_disabled" | "webhook.endpoint_enabled" | "webhook.delivery_failed" | "webhook.limit_reached")[]; description?: string | null | undefined; filter?: Record<string, unknown> | null | undefined; }; output: Shape13; meta: object }>;
      /** Change URL, events, description or filter (owner or admin) */
      update: TRPCMutationProcedure<{ input: { id: string; url?: string | undefined; events?: ("*" | "contact.created" | "contact.updated" | "contact.deleted" | "contact.stage_changed" | "contact.score_changed" | "contact.tag_added" | "contact.consent_changed" | "deal.created" | "deal.updated" | "deal.won" | "deal.lost" | "deal.stage_changed" | "message.sent" | "message.received" | "conversation.created" | "task.created" | "task.completed" | "booking.created" | "booking.cancelled" | "form.submitted" | "ai_action.created" | "ai_action.approved" | "ai_action.rejected" | "tracking.email_opened" | "tracking.link_clicked" | "tracking.page_visited" | "tracking.custom_event" | "nonprofit.verification_recorded" | "nonprofit.activated" | "webhook.endpoint_disabled" | "webhook.endpoint_enabled" | "webhook.delivery_failed" | "webhook.limit_reached")[] | undefined; description?: string | null | undefined; filter?: Record<string, unknown> | null | undefined; }; output: Shape13; meta: object }>;
      /** Delete a webhook endpoint and its delivery log (owner or admin) */
      delete: TRPCMutationProcedure<{ input: { id: string; }; output: void; meta: object }>;
      /** Turn an endpoint back on; resets the failure count (owner or admin) */
      enable: TRPCMutationProcedure<{ input: { id: string; }; output: Shape13; meta: object }>;
      /** Stop deliveries to an endpoint (owner or admin) */
      disable: TRPCMutationProcedure<{ input: { id: string; }; output: Shape13; meta: object }>;
      /** Replace the signing secret (owner or admin) */
      rotateSecret: TRPCMutationProcedure<{ input: { id: string; }; output: { secret: string; previousSecretExpiresAt: string; }; meta: object }>;
      /** The event catalogue: every event with its description and an example payload */
      eventTypes: TRPCQueryProcedure<{ input: void; output: { name: string; group: "Contacts" | "Forms" | "Messages" | "AI actions" | "Bookings" | "Deals" | "Nonprofit" | "Tasks" | "Tracking" | "Webhooks" | "Test"; label: string; description: string; subscribable: boolean; example: { id: string; event: string; timestamp: string; data: Record<string, unknown>; source?: string | undefined; }; }[]; meta: object }>;
    };
    automation: {
      /** Subscribe a REST hook to one trigger (owner or admin) */
      subscribe: TRPCMutationProcedure<{ input: { hookUrl: string; triggerEvent: "contact.created" | "contact.updated" | "contact.deleted" | "contact.stage_changed" | "contact.tag_added" | "deal.created" | "deal.updated" | "deal.won" | "deal.lost" | "deal.stage_changed" | "message.received" | "task.created" | "task.completed" | "booking.created" | "form.submitted"; }; output: { id: string; hookUrl: string; triggerEvent: "contact.created" | "contact.updated" | "contact.deleted" | "contact.stage_changed" | "contact.tag_added" | "deal.created" | "deal.updated" | "deal.won" | "deal.lost" | "deal.stage_changed" | "message.received" | "task.created" | "task.completed" | "booking.created" | "form.submitted"; secret: string; enabled: boolean; disabledReason: string | null; createdAt: string; }; meta: object }>;
      /** Unsubscribe a REST hook (its own key, or an owner or admin) */
      unsubscribe: TRPCMutationProcedure<{ input: { id: string; }; output: void; meta: object }>;
      /** Test the key: the organization and user it acts for (connection label) */
      me: TRPCQueryProcedure<{ input: void; output: { organization: { id: string; name: string; }; user: { id: string; email: string; name: string | null; }; role: "owner" | "admin" | "member"; via: "session" | "internal_key"; label: string; }; meta: object }>;
      /** The triggers a hook may subscribe to, with an example payload, and the samples and polling URLs of each */
      triggers: TRPCQueryProcedure<{ input: void; output: { key: "contact.created" | "contact.updated" | "contact.deleted" | "contact.stage_changed" | "contact.tag_added" | "deal.created" | "deal.updated" | "deal.won" | "deal.lost" | "deal.stage_changed" | "message.received" | "task.created" | "task.completed" | "booking.created" | "form.submitted"; label: string; description: string; sample: { id: string; event: string; timestamp: string; data: Record<string, unknown>; source?: "api" | "ai" | "sync" | "inbound" | "app" | "zapier" | "import" | "automation" | "system" | "partner" | undefined; }; sampleIsExample: true; samplesUrl: string; pollUrl: string; }[]; meta: object }>;
      /** Up to 3 of the organization's latest payloads of a trigger */
      samples: TRPCQueryProcedure<{ input: { event: string; }; output: Shape14; meta: object }>;
      /** A polling trigger: the organization's latest events of a trigger, newest first, each with its id */
      poll: TRPCQueryProcedure<{ input: { event: string; limit?: unknown; }; output: Shape14; meta: object }>;
      /** The actions with their required and optional inputs */
      actions: TRPCQueryProcedure<{ input: void; output: { key: string; label: string; description: string; required: string[]; requiredAnyOf: string[]; optional: string[]; inputs: { key: string; label: string; required: boolean; list: boolean; description: string; dropdown: { source: "tags" | "companies" | "pipelines"; url: string; value: string; label: string; } | null; }[]; }[]; meta: object }>;
      /** The searches (find-or-create) with their inputs */
      searches: TRPCQueryProcedure<{ input: void; output: { key: string; label: string; description: string; url: string; inputs: { key: string; label: string; required: boolean; list: boolean; description: string; dropdown: { source: "tags" | "companies" | "pipelines"; url: string; value: string; label: string; } | null; }[]; createAction: string; }[]; meta: object }>;
      /** Find the contact with an exact email (a list of 0 or 1), for find-or-create */
      findContact: TRPCQueryProcedure<{ input: { email: string; }; output: { id: string; email: string | null; firstName: string | null; lastName: string | null; phone: string | null; jobTitle: string | null; tags: string[]; leadScore: number; stage: string; website: string | null; linkedin: string | null; custom: Record<string, unknown>; source: string; scoreOverride: number | null; company: { id: string; name: string | null; domain: string; } | null; emailConsent: boolean; smsConsent: boolean; createdAt: string; updatedAt: string; }[]; meta: object }>;
      dropdowns: {
        /** Pipelines with their stages, for create_deal.pipelineId */
        pipelines: TRPCQueryProcedure<{ input: void | Record<string, never> | undefined; output: { id: string; name: string; isDefault: boolean; createdAt: string; stages: { id: string; name: string; position: number; }[]; }[]; meta: object }>;
        /** Tags the organization's contacts carry, most used first, for the tags inputs */
        tags: TRPCQueryProcedure<{ input: void | Record<string, never> | undefined; output: { id: string; name: string; contacts: number; }[]; meta: object }>;
        /** Companies in domain order, a page at a time, for the company inputs */
        companies: TRPCQueryProcedure<{ input: { after?: string | undefined; limit?: unknown; }; output: { id: string; domain: string; name: string | null; label: string; }[]; meta: object }>;
      };
      run: {
        /** Create a contact (source zapier) */
        create_contact: TRPCMutationProcedure<{ input: { firstName: string; lastName: string; email?: string | null | undefined; phone?: string | null | undefined; company?: string | null | undefined; source?: string | null | undefined; tags?: string | string[] | null | undefined; }; output: Shape4; meta: object }>;
        /** Update a contact found by id or email */
        update_contact: TRPCMutationProcedure<{ input: { id?: string | null | undefined; email?: string | null | undefined; firstName?: string | null | undefined; lastName?: string | null | undefined; phone?: string | null | undefined; company?: string | null | undefined; }; output: Shape4; meta: object }>;
        /** Open a deal for a contact on a pipeline */
        create_deal: TRPCMutationProcedure<{ input: { contactId: string; pipelineId: string; }; output: Shape9; meta: object }>;
        /** Create a task */
        create_task: TRPCMutationProcedure<{ input: { title: string; }; output: Shape11; meta: object }>;
        /** Text a contact who consented to SMS */
        send_sms: TRPCMutationProcedure<{ input: { to: string; body: string; }; output: Shape6; meta: object }>;
        /** Add tags to a contact */
        add_tag: TRPCMutationProcedure<{ input: { contactId: string; tags: string | string[]; }; output: Shape4; meta: object }>;
      };
    };
    workflows: {
      /** Workflows, newest first */
      list: TRPCQueryProcedure<{ input: { limit?: number | undefined; cursor?: string | undefined; }; output: { items: { id: string; name: string; trigger: "webhook_received"; steps: { action: "send_sms" | "update_contact" | "create_deal" | "create_task" | "add_tag"; input: Record<string, unknown>; }[]; enabled: boolean; intakeUrlHint: string; createdAt: string; updatedAt: string; }[]; nextCursor: string | null; }; meta: object }>;
      /** A workflow */
      get: TRPCQueryProcedure<{ input: { id: string; }; output: Shape15; meta: object }>;
      /** Create a workflow (owner or admin); the answer holds its intake URL, shown this once */
      create: TRPCMutationProcedure<{ input: { name: string; steps: { action: "send_sms" | "update_contact" | "create_deal" | "create_task" | "add_tag"; input?: unknown; }[]; trigger?: "webhook_received" | undefined; enabled?: boolean | undefined; }; output: Shape16; meta: object }>;
      /** Change a workflow (owner or admin); fields left out keep their values */
      update: TRPCMutationProcedure<{ input: { id: string; name?: string | undefined; steps?: { action: "send_sms" | "update_contact" | "create_deal" | "create_task" | "add_tag"; input?: unknown; }[] | undefined; enabled?: boolean | undefined; }; output: Shape15; meta: object }>;
      /** A new intake URL (owner or admin); the old one stops at once */
      rotateToken: TRPCMutationProcedure<{ input: { id: string; }; output: Shape16; meta: object }>;
      /** Delete a workflow (owner or admin); its runs stay on their contacts */
      delete: TRPCMutationProcedure<{ input: { id: string; }; output: void; meta: object }>;
      /** A workflow's runs, newest first, with each step's outcome */
      runs: TRPCQueryProcedure<{ input: { id: string; limit?: number | undefined; cursor?: string | undefined; }; output: { items: { id: string; workflowId: string | null; workflowName: string; contactId: string | null; status: string; steps: { action: "send_sms" | "update_contact" | "create_deal" | "create_task" | "add_tag"; input: Record<string, unknown>; outcome: { status: "ok"; recordId: string; at: string; } | { status: "error"; code: string; message: string; at: string; } | null; }[]; payload: Record<string, unknown>; createdAt: string; finishedAt: string | null; }[]; nextCursor: string | null; }; meta: object }>;
      /** A workflow run with each step's outcome */
      run: TRPCQueryProcedure<{ input: { runId: string; }; output: { id: string; workflowId: string | null; workflowName: string; contactId: string | null; status: string; steps: { action: "send_sms" | "update_contact" | "create_deal" | "create_task" | "add_tag"; input: Record<string, unknown>; outcome: { status: "ok"; recordId: string; at: string; } | { status: "error"; code: string; message: string; at: string; } | null; }[]; payload: Record<string, unknown>; createdAt: string; finishedAt: string | null; }; meta: object }>;
      /** Trigger a workflow: its intake URL ('Webhook received'); no key, the token is the credential */
      intake: TRPCMutationProcedure<{ input: { [x: string]: unknown; token: string; email?: string | null | undefined; contactId?: string | null | undefined; }; output: { runId: string; status: "queued"; contactId: string; contactCreated: boolean; }; meta: object }>;
    };
  }
>;
