import path from "node:path";
import Database from "libsql";
import pg from "pg";
import type { TestShoal } from "./shoal.js";

/**
 * Sets raw columns of one database row in a test Shoal's control-plane store (either dialect), for
 * tests that need a state another feature would make (a branch's parent, a schema link). Values
 * are test constants, inlined as SQL literals.
 */
export async function setDatabaseColumns(
  h: TestShoal,
  id: string,
  values: Record<string, string | number | null>,
): Promise<void> {
  const literal = (v: string | number | null) =>
    v === null ? "null" : typeof v === "number" ? String(v) : `'${v.replace(/'/g, "''")}'`;
  const sets = Object.entries(values)
    .map(([k, v]) => `${k} = ${literal(v)}`)
    .join(", ");
  const statement = `update databases set ${sets} where id = ${literal(id)}`;
  if (h.metadataUrl) {
    const c = new pg.Client({ connectionString: h.metadataUrl });
    await c.connect();
    try {
      await c.query(statement);
    } finally {
      await c.end();
    }
    return;
  }
  const db = new Database(path.join(h.dataDir, "control-plane.db"));
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    db.prepare(statement).run();
  } finally {
    db.close();
  }
}
