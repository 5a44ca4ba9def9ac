/**
 * The server's normalizeDomain (packages/core/src/companies/domain.ts), copied from its source for the dry run of
 * `leadwire import`, which needs no server. Do not edit: run `npm run sdk:generate` after changing it there.
 */
export function normalizeDomain(input: string): string | null {
  const raw = input.trim();
  if (!raw || /\s/.test(raw)) return null;
  let host: string;
  try {
    host = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`).hostname;
  } catch {
    return null;
  }
  host = host
    .toLowerCase()
    .replace(/\.$/, '')
    .replace(/^www\./, '');
  if (host.length > 253 || host.startsWith('[')) return null;
  const labels = host.split('.');
  if (labels.length < 2) return null;
  const tld = labels[labels.length - 1]!;
  if (!/^([a-z]{2,63}|xn--[a-z0-9-]{1,59})$/.test(tld)) return null;
  return labels.every((l) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(l)) ? host : null;
}
