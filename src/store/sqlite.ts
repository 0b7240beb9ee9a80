import { mkdir } from "node:fs/promises";
import path from "node:path";
import { Kysely, SqliteDialect } from "kysely";
import { sqliteDialect } from "./dialect.js";
import { LibsqlKyselyDatabase, openControlPlaneFile } from "./libsql-driver.js";
import type { DB } from "./schema.js";
import { Store } from "./store.js";

/** Opens (creating if needed) the embedded control-plane store at `<dataDir>/control-plane.db` and migrates it. */
export async function openSqliteStore(dataDir: string): Promise<Store> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(dataDir, "control-plane.db");
  const db = new Kysely<DB>({
    dialect: new SqliteDialect({ database: new LibsqlKyselyDatabase(openControlPlaneFile(file)) }),
  });
  const store = new Store(db, sqliteDialect);
  await store.migrate();
  return store;
}
