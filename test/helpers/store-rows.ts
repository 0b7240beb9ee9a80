import path from "node:path";
import Database from "libsql";
import pg from "pg";
import { readOnlyFile } from "../../src/lib/read-only-file.js";
import type { TestShoal } from "./shoal.js";

/**
 * Reads rows straight from a test Shoal's control-plane store, whichever it is, for tests that
 * check what is (or is not) persisted. `sql` must be valid in both dialects.
 */
export async function storeRows(h: TestShoal, sql: string): Promise<Record<string, unknown>[]> {
  if (h.metadataUrl) {
    const client = new pg.Client({ connectionString: h.metadataUrl });
    await client.connect();
    try {
      return (await client.query(sql)).rows;
    } finally {
      await client.end();
    }
  }
  const db = new Database(readOnlyFile(path.join(h.dataDir, "control-plane.db")));
  try {
    return db.prepare(sql).all() as Record<string, unknown>[];
  } finally {
    db.close();
  }
}
