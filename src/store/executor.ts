import type { Kysely } from "kysely";
import type { StoreDialect } from "./dialect.js";
import type { DB } from "./schema.js";

/** What every repository works on: a connection or an open transaction, and the dialect's traits. */
export interface Executor {
  db: Kysely<DB>;
  dialect: StoreDialect;
}
