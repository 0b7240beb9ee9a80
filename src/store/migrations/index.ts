import type { Kysely, Migration, MigrationProvider } from "kysely";
import type { DialectKind } from "../dialect.js";
import * as m0001 from "./0001-initial.js";
import * as m0002 from "./0002-data-plane.js";
import * as m0003 from "./0003-platform.js";
import * as m0004 from "./0004-nodes.js";
import * as m0005 from "./0005-seeds.js";
import * as m0006 from "./0006-allowed-ips.js";
import * as m0007 from "./0007-revoked-token-lookup.js";
import * as m0008 from "./0008-holding-counts.js";
import * as m0009 from "./0009-storage-history.js";
import * as m0010 from "./0010-encryption.js";
import * as m0012 from "./0012-primary-leases.js";
import * as m0013 from "./0013-org-jwks.js";
import * as m0014 from "./0014-deleted-databases.js";
import * as m0015 from "./0015-standbys.js";

/**
 * Every migration in order. Names never change once released; a new schema change is a new file.
 * Each migration receives the dialect so the few spelling differences stay inside the migration.
 */
const ALL: Record<string, { up(db: Kysely<unknown>, kind: DialectKind): Promise<void> }> = {
  "0001-initial": m0001,
  "0002-data-plane": m0002,
  "0003-platform": m0003,
  "0004-nodes": m0004,
  "0005-seeds": m0005,
  "0006-allowed-ips": m0006,
  "0007-revoked-token-lookup": m0007,
  "0008-holding-counts": m0008,
  "0009-storage-history": m0009,
  "0010-encryption": m0010,
  "0012-primary-leases": m0012,
  "0013-org-jwks": m0013,
  "0014-deleted-databases": m0014,
  "0015-standbys": m0015,
};

export function migrationProvider(kind: DialectKind): MigrationProvider {
  return {
    async getMigrations() {
      const out: Record<string, Migration> = {};
      for (const [name, m] of Object.entries(ALL)) out[name] = { up: (db) => m.up(db, kind) };
      return out;
    },
  };
}
