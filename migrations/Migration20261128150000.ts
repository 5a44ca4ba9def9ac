import { Migration } from '@mikro-orm/migrations';

/*
 * The /v1 write path in one round trip (issue 27): each single write (a contact upsert, a lead, a company upsert) is
 * one call of a function here, made by one prepared statement, so one round trip and one transaction. The function
 * confirms the key by id (the process resolved it from memory), honours the Idempotency-Key, writes, emits the events,
 * stores the answer and counts the request, in that order; see docs/architecture.md ("The write path") and
 * docs/benchmarks.md for why a function and not one statement of data-modifying CTEs (measured: about a quarter less
 * PostgreSQL CPU per upsert, the executor set-up of a plan of some sixty nodes on every call being the difference).
 *
 * Each statement inside a (volatile) PL/pgSQL function takes a fresh snapshot, so the order of the steps is the order
 * of what they see: the answer of an Idempotency-Key is read after its lock is held, as the transaction path reads it.
 * The request is counted last, so that the key's counter row is locked only from then to the commit, never while the
 * write waits on a row another request holds: a key's other requests (its reads, a duplicate to be told "in progress")
 * never queue behind its slow write. The count the write was admitted on (`seen`) is read without a lock; two requests
 * that both took the last place are told apart by the count, and the one past the limit rolls back.
 *
 * The merge of upsert rule 4 and the lead score are written here in SQL as contacts/shared/apply.ts and
 * scoring/score.ts write them in TypeScript; test/api/one-trip-merge.test.ts holds the two to the same answers on
 * random contacts and requests. Where SQL would not say exactly what JavaScript says (case folding beyond ASCII, which
 * depends on the database's locale), the function does not merge: it answers no contact and the caller takes the
 * TypeScript path in a transaction.
 */

/** What `String.prototype.trim` removes (ECMAScript WhiteSpace and LineTerminator); `btrim` without a set removes spaces. */
const JS_WHITESPACE = `E'\\t\\n\\u000b\\f\\r \\u00a0\\u1680\\u2000\\u2001\\u2002\\u2003\\u2004\\u2005\\u2006\\u2007\\u2008\\u2009\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff'`;
const present = (x: string) => `(coalesce(btrim(${x}, ${JS_WHITESPACE}), '') <> '')`;
const LOWER_ASCII = `'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'`;

const UP = [
  /*
   * Fails the statement that calls it, so that everything it wrote rolls back: SQLSTATE LW001, the reason as the
   * message (the caller tells the cases apart by it).
   */
  `create function "leadwire_refuse"("reason" text) returns int language plpgsql volatile as $$
begin
  raise exception using errcode = 'LW001', message = "reason";
end
$$;`,

  // finalScore(baseScore(...)) of scoring/score.ts, for an ASCII source (the callers pass no other).
  `create function "leadwire_score"("email" text, "phone" text, "company_id" uuid, "job_title" text, "website" text, "linkedin" text,
  "source" text, "has_booking" boolean, "adjustment" int, "override" int) returns int language sql immutable parallel safe as $$
  select case when "override" is not null then least(100, greatest(0, "override")) else least(100, greatest(0,
    least(100, greatest(0,
      (case when ${present('"email"')} then 15 else 0 end)
      + (case when ${present('"phone"')} then 10 else 0 end)
      + (case when "company_id" is not null then 15 else 0 end)
      + (case when ${present('"job_title"')} then 10 else 0 end)
      + (case when ${present('"website"')} or ${present('"linkedin"')} then 5 else 0 end)
      + (case when "has_booking" then 20 else
          case translate(btrim("source", E'\\t\\n\\u000b\\f\\r '), ${LOWER_ASCII})
            when 'booking' then 20 when 'referral' then 15 when 'form' then 10 else 0 end end)))
    + least(15, greatest(-15, "adjustment")))) end
$$;`,

  /*
   * The first half of a /v1 write's envelope: the key (still standing), the room left in its window (read without a
   * lock), the Idempotency-Key's lock and stored answer. `go` when the write may run.
   */
  `create function "leadwire_v1_open"("p_key_id" uuid, "p_now" timestamptz, "p_minute" timestamptz, "p_limit" int, "p_idem_key" text,
  "p_idem_since" timestamptz, out "key_ok" boolean, out "locked" boolean, out "prior_hash" text, out "prior_response" jsonb,
  out "go" boolean) language plpgsql volatile as $$
#variable_conflict use_column
begin
  "go" := false;
  "key_ok" := exists (
    select 1 from "api_keys" "k" join "users" "u" on "u"."id" = "k"."created_by_id"
    where "k"."id" = "p_key_id" and "k"."type" = 'public' and "k"."revoked_at" is null
      and ("k"."expires_at" is null or "k"."expires_at" > "p_now") and "u"."active" and "u"."credential_epoch" = "k"."owner_epoch");
  if not "key_ok" or coalesce((select "c"."count" from "rate_limit_counters" "c"
      where "c"."bucket" = 'key:' || "p_key_id" and "c"."window_start" = "p_minute"), 0) >= "p_limit" then
    return;
  end if;
  if "p_idem_key" is null then
    "go" := true;
    return;
  end if;
  "locked" := pg_try_advisory_xact_lock(hashtextextended('idempotency:' || "p_key_id"::text || ':' || "p_idem_key", 0));
  if "locked" then
    select "r"."request_hash", "r"."response" into "prior_hash", "prior_response" from "idempotency_records" "r"
    where "r"."api_key_id" = "p_key_id" and "r"."key" = "p_idem_key" and "r"."created_at" > "p_idem_since";
    "go" := "prior_hash" is null;
  end if;
end
$$;`,

  /* The answer stored under the Idempotency-Key (an expired one replaced). */
  `create function "leadwire_v1_store"("p_key_id" uuid, "p_idem_key" text, "p_idem_hash" text, "p_idem_since" timestamptz, "p_now" timestamptz,
  "p_response" jsonb) returns void language plpgsql volatile as $$
begin
  if "p_idem_key" is null then return; end if;
  insert into "idempotency_records" ("api_key_id", "key", "request_hash", "status", "response", "created_at")
  values ("p_key_id", "p_idem_key", "p_idem_hash", 200, "p_response", "p_now")
  on conflict ("api_key_id", "key") do update set "request_hash" = "excluded"."request_hash", "status" = "excluded"."status",
    "response" = "excluded"."response", "created_at" = "excluded"."created_at"
  where "idempotency_records"."created_at" <= "p_idem_since";
  -- Another request answered the key since it was read under the lock: cannot happen while the lock is held, kept as a net.
  if not found then perform leadwire_refuse('idempotency_key_answered_meanwhile'); end if;
end
$$;`,

  /*
   * The second half: the request counted (the write, if any, has taken its locks), a write past the limit rolled
   * back, last_used_at stamped when the process asks (at most once a minute, never waiting on a row being stamped),
   * and nothing committed once the client has stopped waiting (the server was stalled with the call unread).
   */
  `create function "leadwire_v1_close"("p_key_id" uuid, "p_now" timestamptz, "p_minute" timestamptz, "p_minute_ago" timestamptz, "p_limit" int,
  "p_wrote" boolean, "p_touch" boolean, "p_commit_by" timestamptz, out "hits" int) language plpgsql volatile as $$
begin
  insert into "rate_limit_counters" ("bucket", "window_start", "count") values ('key:' || "p_key_id", "p_minute", 1)
  on conflict ("bucket", "window_start") do update set "count" = "rate_limit_counters"."count" + 1
  returning "count" into "hits";
  if "p_wrote" and "hits" > "p_limit" then perform leadwire_refuse('window_spent_meanwhile'); end if;
  if "p_touch" then
    update "api_keys" set "last_used_at" = "p_now" where "api_keys"."id" = (
      select "t"."id" from "api_keys" "t" where "t"."id" = "p_key_id" and ("t"."last_used_at" is null or "t"."last_used_at" < "p_minute_ago")
      for update skip locked);
  end if;
  if "p_commit_by" < clock_timestamp() then perform leadwire_refuse('statement_past_deadline'); end if;
end
$$;`,

  /*
   * Upsert rule 4 for one contact matched by email (insert, or merge into the live contact with that email), with its
   * events in the outbox and the organization's counter. No contact when the organization is near its cap (the
   * caller then admits it under the counter's lock), when companyDomain names no company, or when the stored contact
   * is beyond ASCII where the merge folds case.
   */
  `create function "leadwire_contacts_write"("p_org_id" uuid, "p_row" jsonb, "p_sent" text[], "p_tags" text[], "p_tags_lower" text[],
  "p_custom" jsonb, "p_override" int, "p_domain" text, "p_caps" jsonb, "p_margin" int, "p_event_source" text, "p_at" text, "p_now" timestamptz,
  "p_request_id" text, out "far" boolean, out "company_missing" boolean, out "id" uuid, out "created" boolean)
language plpgsql volatile as $$
#variable_conflict use_column
declare
  "v_company" uuid;
  "w" record;
  "v_contact" jsonb;
begin
  "company_missing" := false;
  select coalesce("n"."contact_count", 0) + 1 <= ("p_caps" ->> "o"."plan"::text)::int + greatest(0, "o"."contact_booster") - "p_margin"
    into "far" from "organizations" "o" left join "contact_counters" "n" on "n"."organization_id" = "o"."id" where "o"."id" = "p_org_id";
  if "p_domain" is not null then
    select "co"."id" into "v_company" from "companies" "co" where "co"."organization_id" = "p_org_id" and "co"."domain" = "p_domain";
    "company_missing" := "v_company" is null;
  end if;
  if not coalesce("far", false) or "company_missing" then return; end if;
  insert into "contacts" as "c" ("id", "organization_id", "email", "first_name", "last_name", "phone", "job_title", "website", "linkedin",
    "tags", "custom", "source", "lead_score", "score_adjustment", "score_override", "stage", "company_id", "email_consent", "sms_consent",
    "deleted_at", "created_at", "updated_at")
  select "v"."id", "v"."organization_id", "v"."email", "v"."first_name", "v"."last_name", "v"."phone", "v"."job_title", "v"."website",
    "v"."linkedin", "v"."tags", "v"."custom", "v"."source",
    leadwire_score("v"."email", "v"."phone", "v_company", "v"."job_title", "v"."website", "v"."linkedin", "v"."source", false,
      "v"."score_adjustment", "v"."score_override"),
    "v"."score_adjustment", "v"."score_override", "v"."stage", "v_company", "v"."email_consent", "v"."sms_consent", "v"."deleted_at",
    "v"."created_at", "v"."updated_at"
  from jsonb_populate_record(null::"contacts", "p_row") "v"
  on conflict ("organization_id", "email") where "deleted_at" is null and "email" is not null do update set
    "email" = coalesce("c"."email", "excluded"."email"),
    "first_name" = case when 'first_name' = any("p_sent") then "excluded"."first_name" else "c"."first_name" end,
    "last_name" = case when 'last_name' = any("p_sent") then "excluded"."last_name" else "c"."last_name" end,
    "phone" = case when 'phone' = any("p_sent") then "excluded"."phone" else "c"."phone" end,
    "job_title" = case when 'job_title' = any("p_sent") then "excluded"."job_title" else "c"."job_title" end,
    "company_id" = case when 'company_id' = any("p_sent") then "excluded"."company_id" else "c"."company_id" end,
    "tags" = "c"."tags" || array(select "s"."t" from unnest("p_tags", "p_tags_lower") with ordinality "s"("t", "l", "n")
      where not exists (select 1 from unnest("c"."tags") "e"("t") where translate("e"."t", ${LOWER_ASCII}) = "s"."l") order by "s"."n"),
    "custom" = ("c"."custom" || "p_custom") - array(select "e"."key" from jsonb_each("p_custom") "e" where "e"."value" = 'null'::jsonb),
    "score_override" = coalesce("p_override", "c"."score_override"),
    "lead_score" = leadwire_score(coalesce("c"."email", "excluded"."email"),
      case when 'phone' = any("p_sent") then "excluded"."phone" else "c"."phone" end,
      case when 'company_id' = any("p_sent") then "excluded"."company_id" else "c"."company_id" end,
      case when 'job_title' = any("p_sent") then "excluded"."job_title" else "c"."job_title" end,
      "c"."website", "c"."linkedin", "c"."source",
      exists (select 1 from "bookings" "b" where "b"."contact_id" = "c"."id" and "b"."status" = 'confirmed'),
      "c"."score_adjustment", coalesce("p_override", "c"."score_override")),
    "updated_at" = "excluded"."updated_at"
  where octet_length("c"."source") = char_length("c"."source")
    and (cardinality("p_tags") = 0 or octet_length(array_to_string("c"."tags", '')) = char_length(array_to_string("c"."tags", '')))
  returning "c"."id", "c"."email", "c"."first_name", "c"."last_name", "c"."phone", "c"."job_title", "c"."tags", "c"."lead_score",
    "c"."stage", "c"."source", "c"."company_id", "c"."created_at", old."tags" as "old_tags", old."lead_score" as "old_lead_score",
    old."id" is null as "created"
  into "w";
  if not found then return; end if;
  "id" := "w"."id";
  "created" := "w"."created";
  -- toEventContact of contacts/shared/row.ts.
  "v_contact" := jsonb_build_object('id', "w"."id", 'email', "w"."email", 'firstName', "w"."first_name", 'lastName', "w"."last_name",
    'phone', "w"."phone", 'jobTitle', "w"."job_title", 'tags', to_jsonb("w"."tags"), 'leadScore', "w"."lead_score", 'stage', "w"."stage",
    'source', "w"."source", 'companyId', "w"."company_id",
    'createdAt', to_char("w"."created_at" at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'updatedAt', "p_at");
  -- The events in the order upsert.ts emits them: created or updated, a tag_added per tag gained, score_changed.
  insert into "outbox_events" ("id", "organization_id", "event", "payload", "created_at", "request_id")
  select "e"."id", "p_org_id", "e"."event",
    jsonb_build_object('id', "e"."id", 'event', "e"."event", 'timestamp', "p_at", 'data', "e"."data")
      || case when "p_event_source" is null then '{}'::jsonb else jsonb_build_object('source', "p_event_source") end,
    "p_now", "p_request_id"
  from (
    select gen_random_uuid() as "id", "x"."event", "x"."data", "x"."ord" from (
      select case when "w"."created" then 'contact.created' else 'contact.updated' end as "event",
        jsonb_build_object('contact', "v_contact") as "data", 0::bigint as "ord"
      union all
      select 'contact.tag_added', jsonb_build_object('contact', "v_contact", 'tag', "t"."tag"), "t"."n"
      from unnest("w"."tags"[coalesce(cardinality("w"."old_tags"), 0) + 1:]) with ordinality "t"("tag", "n")
      where not "w"."created"
      union all
      select 'contact.score_changed', jsonb_build_object('contact', "v_contact", 'previousScore', "w"."old_lead_score"),
        cardinality("w"."tags") + 1::bigint
      where not "w"."created" and "w"."lead_score" <> "w"."old_lead_score"
    ) "x"
  ) "e" order by "e"."ord";
  if "w"."created" then
    update "contact_counters" set "contact_count" = "contact_count" + 1 where "organization_id" = "p_org_id";
  end if;
end
$$;`,

  /* POST /v1/contacts/upsert by email: the envelope around leadwire_contacts_write, answered as the route answers. */
  `create function "leadwire_v1_contacts_upsert"("p_key_id" uuid, "p_now" timestamptz, "p_minute" timestamptz, "p_minute_ago" timestamptz,
  "p_limit" int, "p_idem_key" text, "p_idem_hash" text, "p_idem_since" timestamptz, "p_commit_by" timestamptz, "p_touch" boolean,
  "p_org_id" uuid, "p_row" jsonb, "p_sent" text[], "p_tags" text[], "p_tags_lower" text[], "p_custom" jsonb, "p_override" int,
  "p_domain" text, "p_caps" jsonb, "p_margin" int, "p_event_source" text, "p_at" text, "p_request_id" text,
  out "key_ok" boolean, out "hits" int, out "locked" boolean, out "prior_hash" text, out "prior_response" jsonb,
  out "far" boolean, out "company_missing" boolean, out "id" uuid, out "created" boolean) language plpgsql volatile as $$
#variable_conflict use_column
declare
  "go" boolean;
begin
  select "o"."key_ok", "o"."locked", "o"."prior_hash", "o"."prior_response", "o"."go"
    into "key_ok", "locked", "prior_hash", "prior_response", "go"
    from leadwire_v1_open("p_key_id", "p_now", "p_minute", "p_limit", "p_idem_key", "p_idem_since") "o";
  if not "key_ok" then return; end if;
  if "go" then
    select "w"."far", "w"."company_missing", "w"."id", "w"."created" into "far", "company_missing", "id", "created"
      from leadwire_contacts_write("p_org_id", "p_row", "p_sent", "p_tags", "p_tags_lower", "p_custom", "p_override", "p_domain", "p_caps",
        "p_margin", "p_event_source", "p_at", "p_now", "p_request_id") "w";
    if "id" is not null then
      perform leadwire_v1_store("p_key_id", "p_idem_key", "p_idem_hash", "p_idem_since", "p_now",
        jsonb_build_object('id', "id", 'created', "created", 'matchedBy', case when "created" then null else 'email' end));
    end if;
  end if;
  select "c"."hits" into "hits" from leadwire_v1_close("p_key_id", "p_now", "p_minute", "p_minute_ago", "p_limit", "id" is not null, "p_touch",
    "p_commit_by") "c";
end
$$;`,

  /*
   * POST /v1/leads by email (lead rules 1-3): the contact as POST /v1/contacts/upsert writes it, then its placement on
   * the first stage of the named pipeline (or the default one); a contact already on it keeps its placement.
   */
  `create function "leadwire_v1_leads_create"("p_key_id" uuid, "p_now" timestamptz, "p_minute" timestamptz, "p_minute_ago" timestamptz,
  "p_limit" int, "p_idem_key" text, "p_idem_hash" text, "p_idem_since" timestamptz, "p_commit_by" timestamptz, "p_touch" boolean,
  "p_org_id" uuid, "p_row" jsonb, "p_sent" text[], "p_tags" text[], "p_tags_lower" text[], "p_custom" jsonb, "p_override" int,
  "p_domain" text, "p_caps" jsonb, "p_margin" int, "p_event_source" text, "p_at" text, "p_request_id" text, "p_pipeline" text, "p_item_id" uuid,
  out "key_ok" boolean, out "hits" int, out "locked" boolean, out "prior_hash" text, out "prior_response" jsonb,
  out "far" boolean, out "company_missing" boolean, out "id" uuid, out "created" boolean, out "pipeline_item_id" uuid, out "warning" text)
language plpgsql volatile as $$
#variable_conflict use_column
declare
  "go" boolean;
  "v_pipeline" uuid;
  "v_stage" uuid;
  "v_contact" uuid;
begin
  select "o"."key_ok", "o"."locked", "o"."prior_hash", "o"."prior_response", "o"."go"
    into "key_ok", "locked", "prior_hash", "prior_response", "go"
    from leadwire_v1_open("p_key_id", "p_now", "p_minute", "p_limit", "p_idem_key", "p_idem_since") "o";
  if not "key_ok" then return; end if;
  if "go" then
    select "w"."far", "w"."company_missing", "w"."id", "w"."created" into "far", "company_missing", "id", "created"
      from leadwire_contacts_write("p_org_id", "p_row", "p_sent", "p_tags", "p_tags_lower", "p_custom", "p_override", "p_domain", "p_caps",
        "p_margin", "p_event_source", "p_at", "p_now", "p_request_id") "w";
    if "id" is not null then
      -- Named apart from the columns called "id" that the statements below read (a column wins over a variable here).
      "v_contact" := "id";
      select "p"."id", (select "s"."id" from "pipeline_stages" "s" where "s"."pipeline_id" = "p"."id" order by "s"."position", "s"."id" limit 1)
        into "v_pipeline", "v_stage"
        from "pipelines" "p"
        where "p"."organization_id" = "p_org_id"
          and (case when "p_pipeline" is null then "p"."is_default" else lower("p"."name") = lower("p_pipeline") end)
        limit 1;
      if "v_pipeline" is null then
        "warning" := 'no_pipeline_found';
      elsif "v_stage" is null then
        "warning" := 'pipeline_has_no_stages';
      else
        insert into "pipeline_items" ("id", "organization_id", "pipeline_id", "stage_id", "contact_id")
        values ("p_item_id", "p_org_id", "v_pipeline", "v_stage", "v_contact")
        on conflict ("pipeline_id", "contact_id") do nothing
        returning "pipeline_items"."id" into "pipeline_item_id";
        -- Already on the pipeline (lead rule 2), or placed meanwhile by a request this statement then waited for: its
        -- placement, read in a snapshot that sees it.
        if "pipeline_item_id" is null then
          select "i"."id" into "pipeline_item_id" from "pipeline_items" "i" where "i"."pipeline_id" = "v_pipeline" and "i"."contact_id" = "v_contact";
        end if;
      end if;
      perform leadwire_v1_store("p_key_id", "p_idem_key", "p_idem_hash", "p_idem_since", "p_now",
        jsonb_build_object('id', "id", 'created', "created", 'pipelineItemId', "pipeline_item_id", 'warning', "warning"));
    end if;
  end if;
  select "c"."hits" into "hits" from leadwire_v1_close("p_key_id", "p_now", "p_minute", "p_minute_ago", "p_limit", "id" is not null, "p_touch",
    "p_commit_by") "c";
end
$$;`,

  /*
   * POST /v1/companies/upsert: insert, or on the natural key (organization, domain) overwrite the fields sent; fields
   * omitted keep their values, custom keys merge with null removing a key (companies/service.ts).
   */
  `create function "leadwire_v1_companies_upsert"("p_key_id" uuid, "p_now" timestamptz, "p_minute" timestamptz, "p_minute_ago" timestamptz,
  "p_limit" int, "p_idem_key" text, "p_idem_hash" text, "p_idem_since" timestamptz, "p_commit_by" timestamptz, "p_touch" boolean,
  "p_org_id" uuid, "p_id" uuid, "p_domain" text, "p_name" text, "p_industry" text, "p_size" text, "p_custom" jsonb, "p_has_name" boolean,
  "p_has_industry" boolean, "p_has_size" boolean,
  out "key_ok" boolean, out "hits" int, out "locked" boolean, out "prior_hash" text, out "prior_response" jsonb, out "id" uuid,
  out "created" boolean) language plpgsql volatile as $$
#variable_conflict use_column
declare
  "go" boolean;
begin
  select "o"."key_ok", "o"."locked", "o"."prior_hash", "o"."prior_response", "o"."go"
    into "key_ok", "locked", "prior_hash", "prior_response", "go"
    from leadwire_v1_open("p_key_id", "p_now", "p_minute", "p_limit", "p_idem_key", "p_idem_since") "o";
  if not "key_ok" then return; end if;
  if "go" then
    insert into "companies" as "c" ("id", "organization_id", "domain", "name", "industry", "size", "custom", "created_at", "updated_at")
    values ("p_id", "p_org_id", "p_domain", "p_name", "p_industry", "p_size", jsonb_strip_nulls("p_custom"), "p_now", "p_now")
    on conflict ("organization_id", "domain") do update set
      "name" = case when "p_has_name" then "excluded"."name" else "c"."name" end,
      "industry" = case when "p_has_industry" then "excluded"."industry" else "c"."industry" end,
      "size" = case when "p_has_size" then "excluded"."size" else "c"."size" end,
      "custom" = jsonb_strip_nulls("c"."custom" || "p_custom"),
      "updated_at" = "excluded"."updated_at"
    returning "c"."id", old."id" is null into "id", "created";
    perform leadwire_v1_store("p_key_id", "p_idem_key", "p_idem_hash", "p_idem_since", "p_now",
      jsonb_build_object('id', "id", 'created', "created", 'domain', "p_domain"));
  end if;
  select "c"."hits" into "hits" from leadwire_v1_close("p_key_id", "p_now", "p_minute", "p_minute_ago", "p_limit", "id" is not null, "p_touch",
    "p_commit_by") "c";
end
$$;`,
];

export class Migration20261128150000 extends Migration {
  override name = 'Migration20261128150000';

  override up(): void | Promise<void> {
    for (const statement of UP) this.addSql(statement);
  }

  override down(): void | Promise<void> {
    for (const fn of [
      '"leadwire_v1_companies_upsert"',
      '"leadwire_v1_leads_create"',
      '"leadwire_v1_contacts_upsert"',
      '"leadwire_contacts_write"',
      '"leadwire_v1_close"',
      '"leadwire_v1_store"',
      '"leadwire_v1_open"',
      '"leadwire_score"',
      '"leadwire_refuse"',
    ]) {
      this.addSql(`drop function if exists ${fn};`);
    }
  }
}
