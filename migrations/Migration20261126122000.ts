import { Migration } from '@mikro-orm/migrations';

/**
 * The trash's index holds only trashed contacts. `contacts_org_deleted_idx` (organization_id, deleted_at) had an entry
 * for every contact, so every new contact and every change of one (never HOT: `updated_at` is in the live list's
 * index) wrote it: about 1.1 of a single upsert's index entries, for an index whose readers want trashed contacts
 * (the trash list in deletion order, the nightly purge by deletion date). Partial on `deleted_at is not null`, a
 * live contact's write skips it; the live-contact readers that used it (the automation's tag choices) read the live
 * list's index, which leads with the organization too.
 */
export class Migration20261126122000 extends Migration {
  override name = 'Migration20261126122000';

  override up(): void | Promise<void> {
    this.addSql(`drop index "contacts_org_deleted_idx";`);
    this.addSql(`create index "contacts_org_deleted_idx" on "contacts" ("organization_id", "deleted_at") where "deleted_at" is not null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "contacts_org_deleted_idx";`);
    this.addSql(`create index "contacts_org_deleted_idx" on "contacts" ("organization_id", "deleted_at");`);
  }
}
