import type { Config } from '../config.ts';
import { AppError } from '../errors.ts';
import type { CaptchaProvider } from './schemas.ts';

/*
 * Server-side CAPTCHA verification. Turnstile, hCaptcha and reCAPTCHA share one protocol: POST form-encoded `secret`,
 * `response` (the token) and optionally `remoteip` to the provider's siteverify address, which answers JSON
 * `{ success: boolean, ... }`. Tokens are single-use, so a token is verified once, after the answers are found valid.
 */

export const captchaErrors = {
  failed: (why: string) => new AppError('captcha_failed', `The CAPTCHA check failed: ${why}`),
  unavailable: (provider: CaptchaProvider, cause: unknown) =>
    Object.assign(
      new AppError(
        'captcha_unavailable',
        `The CAPTCHA provider (${provider}) could not be reached; nothing was saved, try again`,
        undefined,
        cause,
      ),
      {
        headers: { 'retry-after': '5' },
      },
    ),
};

/** reCAPTCHA v3 answers a score (1.0 human, 0.0 bot) beside `success`; below this the token counts as failed. */
const RECAPTCHA_MIN_SCORE = 0.5;

export function verifyUrl(config: Config, provider: CaptchaProvider): string {
  switch (provider) {
    case 'turnstile':
      return config.CAPTCHA_TURNSTILE_VERIFY_URL;
    case 'hcaptcha':
      return config.CAPTCHA_HCAPTCHA_VERIFY_URL;
    case 'recaptcha':
      return config.CAPTCHA_RECAPTCHA_VERIFY_URL;
  }
}

export interface CaptchaCheck {
  provider: CaptchaProvider;
  secret: string;
  siteKey: string;
  token: string | null;
  remoteIp: string | undefined;
}

/** Resolves when the provider accepts the token; throws captcha_failed (400) or captcha_unavailable (503). */
export async function verifyCaptcha(config: Config, c: CaptchaCheck): Promise<void> {
  if (!c.token) throw captchaErrors.failed('no token was sent (cf-turnstile-response, g-recaptcha-response or _captchaToken)');
  const body = new URLSearchParams({ secret: c.secret, response: c.token });
  if (c.remoteIp) body.set('remoteip', c.remoteIp);
  if (c.provider === 'hcaptcha') body.set('sitekey', c.siteKey);
  let answer: { success?: unknown; score?: unknown };
  try {
    const res = await fetch(verifyUrl(config, c.provider), {
      method: 'POST',
      body,
      signal: AbortSignal.timeout(config.CAPTCHA_VERIFY_TIMEOUT_MS),
      redirect: 'error',
    });
    if (!res.ok) throw new Error(`verify endpoint answered ${res.status}`);
    answer = (await res.json()) as typeof answer;
  } catch (err) {
    // The error names the address and status only; the secret travels in the body and is never in a message.
    throw captchaErrors.unavailable(c.provider, err);
  }
  if (answer?.success !== true) throw captchaErrors.failed('the token is invalid or expired; solve the CAPTCHA again');
  if (c.provider === 'recaptcha' && typeof answer.score === 'number' && answer.score < RECAPTCHA_MIN_SCORE) {
    throw captchaErrors.failed('the request looked automated');
  }
}
