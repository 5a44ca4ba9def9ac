import { Migration } from '@mikro-orm/migrations';

/**
 * The read side of /v1: contacts and companies listed in (updated_at, id) order, and the application's company list
 * newest first. Each order has its index, so a page walks its own rows in a large organization and never sorts.
 */
export class Migration20261126094000 extends Migration {
  override name = 'Migration20261126094000';

  override up(): void | Promise<void> {
    this.addSql(
      `create index "contacts_org_updated_live_idx" on "contacts" ("organization_id", "updated_at", "id") where "deleted_at" is null;`,
    );
    this.addSql(`create index "companies_org_updated_idx" on "companies" ("organization_id", "updated_at", "id");`);
    this.addSql(`create index "companies_org_created_idx" on "companies" ("organization_id", "created_at", "id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "companies_org_created_idx";`);
    this.addSql(`drop index if exists "companies_org_updated_idx";`);
    this.addSql(`drop index if exists "contacts_org_updated_live_idx";`);
  }
}
