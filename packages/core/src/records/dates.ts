/** Timestamps leave the service as ISO 8601 UTC strings, whatever pg handed back (a Date, or text from JSON). */
export const iso = (d: Date | string): string => new Date(d).toISOString();
export const isoOrNull = (d: Date | string | null): string | null => (d === null ? null : iso(d));
