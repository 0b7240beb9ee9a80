import { sql } from "kysely";
import { UniqueViolationError } from "../errors.js";
import type { Executor } from "./executor.js";

/**
 * Runs an insert or update and turns a unique violation into `UniqueViolationError(label)`. The
 * label names the rule (for instance "database name"), so the domain can word the conflict.
 *
 * SQLite undoes only the failed statement, while PostgreSQL aborts the whole transaction; inside a
 * PostgreSQL transaction the statement runs under a savepoint, so on both dialects a caller can
 * catch the conflict and go on querying in the same transaction.
 */
export async function guardUnique<T>(ex: Executor, label: string, op: () => Promise<T>): Promise<T> {
  const { db, dialect } = ex;
  const savepoint = dialect.kind === "postgres" && db.isTransaction;
  if (savepoint) await sql`savepoint shoal_guard`.execute(db);
  try {
    const out = await op();
    if (savepoint) await sql`release savepoint shoal_guard`.execute(db);
    return out;
  } catch (e) {
    if (savepoint) await undoStatement(db);
    if (dialect.isUniqueViolation(e)) throw new UniqueViolationError(label);
    throw e;
  }
}

async function undoStatement(db: Executor["db"]): Promise<void> {
  try {
    await sql`rollback to savepoint shoal_guard`.execute(db);
    await sql`release savepoint shoal_guard`.execute(db);
  } catch {
    // The connection itself failed; the statement's own error says more, and the transaction's
    // rollback follows when the caller rethrows.
  }
}
