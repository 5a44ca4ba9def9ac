/** Statements both the public API and the application run on contacts. Placeholders are `?`. */

/** The booking bonus input of the score, read alongside every contact the upsert may rescore. */
export const HAS_BOOKING = `exists (select 1 from bookings b where b.contact_id = c.id and b.status = 'confirmed') as has_booking`;

/** The organization's contact counter, read without a lock: far from the cap that is all admission needs. */
export const READ_CONTACT_COUNT = `select contact_count from organizations where id = ?`;

/**
 * Near the cap, the organization row is locked: new contacts are then admitted one transaction at a time against the
 * counter. NO KEY UPDATE, because only a non-key column changes: foreign-key checks of other inserts are not blocked.
 */
export const LOCK_CONTACT_COUNT = `select contact_count from organizations where id = ? for no key update`;

export const BUMP_CONTACT_COUNT = `update organizations set contact_count = contact_count + ? where id = ?`;
