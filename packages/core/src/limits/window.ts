/** A key's current one-minute rate window, as the authentication statement counted it (limits and auth both read it). */
export interface RateWindow {
  /** Requests counted in the current window, this one included. */
  count: number;
  /** When the current one-minute window ends. */
  resetAt: Date;
}
