import type { WebsiteSnippets } from './schemas.ts';

/**
 * The snippets of docs/website.md as a site owner pastes them, built where the server's public address (`BASE_URL`)
 * is known: the console may be reached under another address than the one websites must load the scripts from.
 */
export function websiteSnippets(baseUrl: string, orgId: string): WebsiteSnippets {
  return {
    organizationId: orgId,
    tracking: `<script async src="${baseUrl}/embed/tracking.js" data-org="${orgId}"></script>`,
    leadCapture: `<div data-leadwire-lead-capture></div>\n<script async src="${baseUrl}/embed/lead-capture.js" data-org="${orgId}"></script>`,
  };
}
