import { existsSync } from "node:fs";
import path from "node:path";
import Database from "libsql";
import pg from "pg";
import { StartError } from "../errors.js";
import { readOnlyFile } from "../lib/read-only-file.js";
import { CopyMismatch, copyTables, sourceMigrations, type TableTally, targetState } from "../store/copy.js";
import { migrationProvider } from "../store/migrations/index.js";
import { numberTypes, openPostgresStore, withoutPassword } from "../store/postgres.js";
import { MIGRATIONS_TABLE, STORE_TABLES } from "../store/tables.js";
import { lockDataFolder } from "./data-folder-lock.js";

export interface StoreCopyOptions {
  /** The stopped instance's data folder, which holds `control-plane.db`. */
  dataDir: string;
  /** The PostgreSQL database to copy into: empty, or holding only what Shoal's migrations make. */
  to: string;
  /** Told as each table is copied and checked. */
  progress?: (t: TableTally) => void;
}

export interface StoreCopyResult {
  source: string;
  /** The target's URL without its password. */
  target: string;
  tables: TableTally[];
}

/** Tables the migrations fill by themselves, which an otherwise empty target may hold. */
const SEEDED = new Set<string>(["plans"]);
/** Kysely's lock table, made beside its migrations table. */
const MIGRATION_LOCK_TABLE = `${MIGRATIONS_TABLE}_lock`;

/**
 * Copies a stopped instance's embedded control plane (organizations, users, tokens, groups,
 * databases, usage, audit log, everything in it) into PostgreSQL, in one transaction that commits
 * only once every table's row count and checksum read back from the target match the source's. The
 * source is opened read-only and the data folder is held for the whole copy, so no server can start
 * on it meanwhile. Refused, with nothing changed: a running source, a source written by another
 * version than this build, and a target that holds anything but an empty Shoal schema.
 */
export async function copyControlPlane(opts: StoreCopyOptions): Promise<StoreCopyResult> {
  const file = path.join(opts.dataDir, "control-plane.db");
  if (!existsSync(file)) {
    throw new StartError(
      `${opts.dataDir} holds no embedded control plane (control-plane.db): name the data folder of the instance ` +
        "to copy with --data-dir or SHOAL_DATA_DIR",
    );
  }
  const lock = lockDataFolder(opts.dataDir);
  if (!lock) {
    throw new StartError(
      `a Shoal server is running on ${opts.dataDir}: stop it first, so that the copy sees a control plane ` +
        "nothing is writing to (nothing was copied)",
      1,
    );
  }
  const source = new Database(readOnlyFile(file));
  try {
    const known = Object.keys(await migrationProvider("postgres").getMigrations()).sort();
    checkSourceVersion(file, sourceMigrations(source), known);
    const client = await connect(opts.to);
    try {
      await checkTargetEmpty(opts.to, client, known);
      // The schema goes in first, through the store's own migrations (they run in their own
      // transactions); the rows then go in one transaction of their own.
      await (await openPostgresStore(opts.to, { poolSize: 1 })).close();
      const tables = await copyInOneTransaction(source, client, opts.progress ?? (() => {}));
      return { source: file, target: withoutPassword(opts.to), tables };
    } finally {
      await client.end();
    }
  } finally {
    source.close();
    lock.release();
  }
}

function checkSourceVersion(file: string, source: string[] | undefined, known: string[]): void {
  if (!source) throw new StartError(`${file} is not a Shoal control plane: it records no migrations`);
  const unknown = source.filter((m) => !known.includes(m));
  if (unknown.length > 0) {
    throw new StartError(
      `${file} was last run by a newer Shoal (it has migration ${unknown[0]}, which this version doesn't know): ` +
        "copy it with the shoal of the version that last ran it",
    );
  }
  const missing = known.filter((m) => !source.includes(m));
  if (missing.length > 0) {
    throw new StartError(
      `${file} was last run by an older Shoal (it lacks migration ${missing[0]}): start this version on the ` +
        "data folder once, so that it brings the control plane up to date, stop it, and copy again",
    );
  }
}

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: url,
    types: numberTypes(),
    connectionTimeoutMillis: 10_000,
  });
  // A connection lost after connecting is emitted as an "error" (the running query fails too):
  // unheard, it would end the command with a stack instead of its message.
  client.on("error", () => {});
  try {
    await client.connect();
  } catch (e) {
    await client.end().catch(() => {});
    const reason = (e as Error).message || (e as { code?: string }).code || String(e);
    throw new StartError(`the target PostgreSQL at ${withoutPassword(url)} can't be reached: ${reason}`, 1);
  }
  return client;
}

/** Refuses a target holding another application's tables, another version's schema, or any Shoal data. */
async function checkTargetEmpty(url: string, client: pg.Client, known: string[]): Promise<void> {
  const state = await targetState(client);
  const ours = new Set<string>([...STORE_TABLES, MIGRATIONS_TABLE, MIGRATION_LOCK_TABLE]);
  const foreign = state.tables.filter((t) => !ours.has(t));
  const where = withoutPassword(url);
  if (foreign.length > 0) {
    throw new StartError(
      `the target database ${where} holds tables that aren't Shoal's (${foreign.slice(0, 5).join(", ")}): ` +
        "copy into a new, empty database (for example: createdb shoal); nothing was changed",
    );
  }
  if (state.migrations && state.migrations.join() !== known.join()) {
    throw new StartError(
      `the target database ${where} holds a Shoal control plane of another version: copy into a new, empty ` +
        "database; nothing was changed",
    );
  }
  const held = [...state.rows].filter(([t, n]) => n > 0 && !SEEDED.has(t));
  if (held.length > 0) {
    const what = held.map(([t, n]) => `${n} ${t.replace(/_/g, " ")}`).join(", ");
    throw new StartError(
      `the target database ${where} already holds a Shoal control plane (${what}): the copy goes only into ` +
        "an empty database, so that nothing there is overwritten; nothing was changed",
    );
  }
}

async function copyInOneTransaction(
  source: Database.Database,
  client: pg.Client,
  progress: (t: TableTally) => void,
): Promise<TableTally[]> {
  await client.query("begin");
  try {
    const tables = await copyTables(source, client, progress);
    await client.query("commit");
    return tables;
  } catch (e) {
    await client.query("rollback").catch(() => {});
    if (e instanceof CopyMismatch) {
      throw new StartError(
        `the copy read back differently from the source (${e.message}); nothing was committed`,
        1,
      );
    }
    throw e;
  }
}
