/** Browsers driven by automation (headless test runs, scrapers) declare themselves here; they are not visitors. */
export const automated = (n: Navigator): boolean => n.webdriver === true;

/**
 * Global Privacy Control or Do Not Track is on. Either one makes the snippet anonymous (see ARCHITECTURE.md): no
 * visitor id, no cookie, no identification, no query string or referrer.
 */
export const optedOut = (n: Navigator): boolean =>
  (n as Navigator & { globalPrivacyControl?: boolean }).globalPrivacyControl === true || n.doNotTrack === '1';
