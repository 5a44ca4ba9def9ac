import { Migration } from '@mikro-orm/migrations';

/**
 * Key changes are announced on `leadwire_keys`, so that every server process drops what it remembers about a key (a
 * spent window, "not found") the moment the key stops, or starts, being valid: a key created, revoked, given another
 * expiry or deleted (`{"k": <key hash>, "op": "INSERT" | "UPDATE" | "DELETE"}`), and a user deactivated, reactivated or moved to a new credential epoch by a
 * password change or reset or log-out-all (`{"u": <user id>, "r": <reactivated>}`). Triggers rather than calls in
 * the services, so no path that changes these columns (the admin CLI, an operator's SQL) can forget to tell. NOTIFY
 * goes out at commit, and not at all on rollback; the last-used stamp and the other columns send nothing.
 */
export class Migration20261126050000 extends Migration {
  override name = 'Migration20261126050000';

  override up(): void | Promise<void> {
    this.addSql(`create function "api_keys_api_keys_changed_fn"() returns trigger language plpgsql as $$
begin
  perform pg_notify('leadwire_keys', json_build_object('k', case when tg_op = 'DELETE' then old."key_hash" else new."key_hash" end, 'op', tg_op)::text);
  if tg_op = 'UPDATE' and old."key_hash" is distinct from new."key_hash" then
    perform pg_notify('leadwire_keys', json_build_object('k', old."key_hash", 'op', tg_op)::text);
  end if;
  return null;
end
$$;`);
    this.addSql(
      `create trigger "api_keys_changed" after insert or delete or update of "revoked_at", "expires_at", "owner_epoch", "key_hash", "created_by_id" on "api_keys" for each row execute function "api_keys_api_keys_changed_fn"();`,
    );
    this.addSql(`create function "users_users_credentials_changed_fn"() returns trigger language plpgsql as $$
begin
  perform pg_notify('leadwire_keys', json_build_object('u', new."id", 'r', new."active" and not old."active")::text);
  return null;
end
$$;`);
    this.addSql(`create trigger "users_credentials_changed" after update of "active", "credential_epoch" on "users" for each row
when (old."active" is distinct from new."active" or old."credential_epoch" is distinct from new."credential_epoch")
execute function "users_users_credentials_changed_fn"();`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger if exists "users_credentials_changed" on "users";`);
    this.addSql(`drop function if exists "users_users_credentials_changed_fn"();`);
    this.addSql(`drop trigger if exists "api_keys_changed" on "api_keys";`);
    this.addSql(`drop function if exists "api_keys_api_keys_changed_fn"();`);
  }
}
