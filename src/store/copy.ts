import { createHash } from "node:crypto";
import type Database from "libsql";
import type pg from "pg";
import { MIGRATIONS_TABLE, STORE_TABLES } from "./tables.js";

/** One table as copied: its rows and a checksum of their contents that doesn't depend on row order. */
export interface TableTally {
  table: string;
  rows: number;
  checksum: string;
}

/** The rows read or written per round trip: small enough for PostgreSQL's 65,535 parameters. */
const BATCH_ROWS = 1_000;
const MAX_PARAMETERS = 60_000;
const SUM_MODULUS = 1n << 128n;

/**
 * A multiset checksum: the sum of each row's hash, so the same rows read in another order (SQLite
 * by rowid, PostgreSQL in heap order) give the same answer, in constant memory whatever the table's
 * size. Values are normalised the way both drivers return them (numbers, text, bytes, null), so a
 * value that changed type on the way (a number stored as text) changes the checksum.
 */
export class RowChecksum {
  private sum = 0n;
  rows = 0;

  add(columns: readonly string[], row: Record<string, unknown>): void {
    const canonical = JSON.stringify(columns.map((c) => normalise(row[c])));
    const digest = createHash("sha256").update(canonical).digest();
    this.sum = (this.sum + BigInt(`0x${digest.subarray(0, 16).toString("hex")}`)) % SUM_MODULUS;
    this.rows++;
  }

  get value(): string {
    return this.sum.toString(16).padStart(32, "0");
  }
}

function normalise(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === "bigint") return Number.isSafeInteger(Number(v)) ? Number(v) : `bigint:${v}`;
  if (v instanceof Uint8Array) return { bytes: Buffer.from(v).toString("hex") };
  return v;
}

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The migrations an embedded control plane has run, in order; undefined when it has no record of any. */
export function sourceMigrations(source: Database.Database): string[] | undefined {
  const known = source
    .prepare("select name from sqlite_master where type = 'table' and name = ?")
    .get(MIGRATIONS_TABLE);
  if (!known) return undefined;
  const rows = source.prepare(`select name from ${MIGRATIONS_TABLE} order by name`).all() as {
    name: string;
  }[];
  return rows.map((r) => r.name);
}

/** A table's columns in the embedded file, in their declared order. */
function sourceColumns(source: Database.Database, table: string): string[] {
  const info = source.prepare(`pragma table_info(${quoted(table)})`).all() as { name: string }[];
  return info.map((c) => c.name);
}

/** What the PostgreSQL target holds: its tables, and the migrations it records if it has any. */
export interface TargetState {
  tables: string[];
  migrations: string[] | undefined;
  /** Rows in Shoal's tables, for the tables that exist. */
  rows: Map<string, number>;
}

export async function targetState(client: pg.ClientBase): Promise<TargetState> {
  const { rows: tableRows } = await client.query<{ name: string }>(
    "select table_name as name from information_schema.tables where table_schema = current_schema() order by 1",
  );
  const tables = tableRows.map((r) => r.name);
  const migrations = tables.includes(MIGRATIONS_TABLE)
    ? (await client.query<{ name: string }>(`select name from ${MIGRATIONS_TABLE} order by name`)).rows.map(
        (r) => r.name,
      )
    : undefined;
  const rows = new Map<string, number>();
  for (const t of STORE_TABLES) {
    if (!tables.includes(t)) continue;
    const { rows: counted } = await client.query<{ n: string }>(`select count(*) as n from ${quoted(t)}`);
    rows.set(t, Number(counted[0]!.n));
  }
  return { tables, migrations, rows };
}

/** Every row of a table in the embedded file, a batch at a time in rowid order. */
function* sourceBatches(source: Database.Database, table: string): Generator<Record<string, unknown>[]> {
  const page = source.prepare(
    `select rowid as "__copy_rowid", * from ${quoted(table)} where rowid > ? order by rowid limit ${BATCH_ROWS}`,
  );
  // Rowids are whatever SQLite assigned (positive unless a table chose its own): start below any.
  let after: number | bigint = Number.MIN_SAFE_INTEGER;
  for (;;) {
    const rows = page.all(after) as Record<string, unknown>[];
    if (rows.length === 0) return;
    after = rows[rows.length - 1]!.__copy_rowid as number | bigint;
    yield rows;
  }
}

/** Inserts `rows` into `table` on PostgreSQL, in statements of at most MAX_PARAMETERS values. */
async function insertRows(
  client: pg.ClientBase,
  table: string,
  columns: readonly string[],
  rows: readonly Record<string, unknown>[],
): Promise<void> {
  const perStatement = Math.max(1, Math.floor(MAX_PARAMETERS / columns.length));
  for (let start = 0; start < rows.length; start += perStatement) {
    const slice = rows.slice(start, start + perStatement);
    const values: unknown[] = [];
    const tuples = slice.map((row) => {
      const marks = columns.map((c) => {
        values.push(normaliseForInsert(row[c]));
        return `$${values.length}`;
      });
      return `(${marks.join(", ")})`;
    });
    await client.query(
      `insert into ${quoted(table)} (${columns.map(quoted).join(", ")}) values ${tuples.join(", ")}`,
      values,
    );
  }
}

function normaliseForInsert(v: unknown): unknown {
  if (typeof v === "bigint") return v.toString();
  return v ?? null;
}

/** Checks the target's columns for `table` against the source's; a difference means two schema versions. */
async function sameColumns(
  client: pg.ClientBase,
  table: string,
  columns: readonly string[],
): Promise<string | undefined> {
  const { rows } = await client.query<{ name: string }>(
    "select column_name as name from information_schema.columns where table_schema = current_schema() and table_name = $1",
    [table],
  );
  const target = new Set(rows.map((r) => r.name));
  const missing = columns.filter((c) => !target.has(c));
  const extra = [...target].filter((c) => !columns.includes(c));
  if (missing.length === 0 && extra.length === 0) return undefined;
  return `table ${table}: ${[...missing.map((c) => `${c} only in the source`), ...extra.map((c) => `${c} only in the target`)].join(", ")}`;
}

/** Sums the target table's rows through a cursor, inside the copying transaction. */
async function targetChecksum(
  client: pg.ClientBase,
  table: string,
  columns: readonly string[],
): Promise<RowChecksum> {
  const sum = new RowChecksum();
  await client.query(`declare copy_check no scroll cursor for select * from ${quoted(table)}`);
  try {
    for (;;) {
      const { rows } = await client.query(`fetch ${BATCH_ROWS} from copy_check`);
      if (rows.length === 0) break;
      for (const row of rows) sum.add(columns, row);
    }
  } finally {
    await client.query("close copy_check");
  }
  return sum;
}

/**
 * Copies every control-plane table from the embedded file into PostgreSQL, whose schema must
 * already be at the same migration, inside the caller's transaction on `client`: rows the
 * migrations seeded are replaced, the counters that triggers keep are copied as they are (the
 * triggers are off while rows go in), serial columns continue after the highest copied value, and
 * each table's count and checksum are compared before the caller commits. Returns the tallies, or
 * throws a `CopyMismatch` naming the first table that differs.
 */
export async function copyTables(
  source: Database.Database,
  client: pg.ClientBase,
  progress: (t: TableTally) => void,
): Promise<TableTally[]> {
  for (const t of [...STORE_TABLES].reverse()) await client.query(`delete from ${quoted(t)}`);
  for (const t of STORE_TABLES) await client.query(`alter table ${quoted(t)} disable trigger user`);
  const tallies: TableTally[] = [];
  for (const table of STORE_TABLES) {
    const columns = sourceColumns(source, table);
    const differs = await sameColumns(client, table, columns);
    if (differs) throw new CopyMismatch(differs);
    const expected = new RowChecksum();
    for (const batch of sourceBatches(source, table)) {
      for (const row of batch) expected.add(columns, row);
      await insertRows(client, table, columns, batch);
    }
    await continueSerials(client, table);
    const got = await targetChecksum(client, table, columns);
    if (got.rows !== expected.rows || got.value !== expected.value) {
      throw new CopyMismatch(
        `table ${table}: the source has ${expected.rows} rows (checksum ${expected.value}), ` +
          `the target ${got.rows} (checksum ${got.value})`,
      );
    }
    const tally = { table, rows: expected.rows, checksum: expected.value };
    tallies.push(tally);
    progress(tally);
  }
  for (const t of STORE_TABLES) await client.query(`alter table ${quoted(t)} enable trigger user`);
  return tallies;
}

/** Moves a table's serial sequences past the highest copied value, so new rows don't collide. */
async function continueSerials(client: pg.ClientBase, table: string): Promise<void> {
  const { rows } = await client.query<{ name: string }>(
    `select column_name as name from information_schema.columns
      where table_schema = current_schema() and table_name = $1 and column_default like 'nextval(%'`,
    [table],
  );
  for (const { name } of rows) {
    await client.query(
      `select setval(pg_get_serial_sequence($1, $2), coalesce((select max(${quoted(name)}) from ${quoted(table)}), 0) + 1, false)`,
      [table, name],
    );
  }
}

/** The copy read back differently from what was read: nothing is committed. */
export class CopyMismatch extends Error {}
