import { type Kysely, sql } from "kysely";
import type { DialectKind } from "../dialect.js";

/**
 * How many databases and groups each organization holds, kept on the organization's row by
 * triggers, so a quota check reads one number instead of counting rows (a create on a capped plan
 * then costs the same at 100,000 databases as at 10). Triggers rather than application code: every
 * way a row comes, goes or moves (creates, deletes, cascades from a group or an organization,
 * transfers) is counted, including ones added later.
 */
export async function up(db: Kysely<unknown>, kind: DialectKind): Promise<void> {
  for (const column of ["database_count", "group_count"]) {
    await db.schema
      .alterTable("organizations")
      .addColumn(column, "integer", (c) => c.notNull().defaultTo(0))
      .execute();
  }
  await sql`update organizations set
    database_count = (select count(*) from databases d where d.org_id = organizations.id),
    group_count = (select count(*) from groups g where g.org_id = organizations.id)`.execute(db);
  for (const [table, column] of [
    ["databases", "database_count"],
    ["groups", "group_count"],
  ] as const) {
    if (kind === "sqlite") await sqliteTriggers(db, table, column);
    else await postgresTriggers(db, table, column);
  }
}

async function sqliteTriggers(db: Kysely<unknown>, table: string, column: string): Promise<void> {
  const t = sql.raw(table);
  const c = sql.raw(column);
  await sql`create trigger ${sql.raw(`${table}_count_insert`)} after insert on ${t} begin
    update organizations set ${c} = ${c} + 1 where id = new.org_id; end`.execute(db);
  await sql`create trigger ${sql.raw(`${table}_count_delete`)} after delete on ${t} begin
    update organizations set ${c} = ${c} - 1 where id = old.org_id; end`.execute(db);
  await sql`create trigger ${sql.raw(`${table}_count_move`)} after update of org_id on ${t}
    when old.org_id <> new.org_id begin
    update organizations set ${c} = ${c} - 1 where id = old.org_id;
    update organizations set ${c} = ${c} + 1 where id = new.org_id; end`.execute(db);
}

async function postgresTriggers(db: Kysely<unknown>, table: string, column: string): Promise<void> {
  const fn = sql.raw(`shoal_count_${table}`);
  const c = sql.raw(column);
  await sql`create function ${fn}() returns trigger language plpgsql as $$
    begin
      if tg_op in ('DELETE', 'UPDATE') then
        update organizations set ${c} = ${c} - 1 where id = old.org_id;
      end if;
      if tg_op in ('INSERT', 'UPDATE') then
        update organizations set ${c} = ${c} + 1 where id = new.org_id;
      end if;
      return null;
    end $$`.execute(db);
  const t = sql.raw(table);
  await sql`create trigger ${sql.raw(`${table}_count`)} after insert or delete on ${t}
    for each row execute function ${fn}()`.execute(db);
  await sql`create trigger ${sql.raw(`${table}_count_move`)} after update of org_id on ${t}
    for each row when (old.org_id is distinct from new.org_id) execute function ${fn}()`.execute(db);
}
