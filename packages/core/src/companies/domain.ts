import { errors } from '../errors.ts';

/**
 * Normalises a company domain to its bare lowercase host: scheme, `www.`, port, path, query, fragment, user info and
 * case are dropped, so `https://WWW.Example.com:8080/about?x=1` becomes `example.com`. Returns null when what is left
 * is not a public-looking host name (an IP address, `localhost`, a single label, bad characters).
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

/** The normalised domain of `input`, or 400 validation_failed naming `domain`. */
export function requireDomain(input: string): string {
  const domain = normalizeDomain(input);
  if (!domain) {
    throw errors.validation(
      [{ path: 'domain', message: 'domain is not a usable domain (expected e.g. example.com)' }],
      `domain ${JSON.stringify(input)} is not a usable domain`,
    );
  }
  return domain;
}
