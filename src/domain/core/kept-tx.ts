import type { Clock } from "../../lib/time.js";
import { isoTime } from "../../lib/time.js";
import type { DatabaseRow } from "../../store/schema.js";
import type { Repos } from "../../store/store.js";
import type { FileFacts } from "./ports.js";

/** What keeping a deleted database reaches: the window, the time, the size of its files. */
export interface KeepPorts {
  /** How long deleted databases and groups stay restorable; 0: not kept. */
  deletedRetentionMs: number;
  clock: Clock;
  files: Pick<FileFacts, "sizeOf">;
}

/** The columns of `databases`: what a restore puts back, and all of it. */
const DATABASE_COLUMNS = [
  "id",
  "org_id",
  "group_id",
  "name",
  "size_limit",
  "block_reads",
  "block_writes",
  "allow_attach",
  "delete_protection",
  "created_at",
  "hostname_label",
  "token_generation",
  "parent_id",
  "branched_at",
  "is_schema",
  "schema_id",
  "awaiting_upload",
  "schema_seq",
  "allowed_ips",
  "encryption_cipher",
  "encryption_salt",
  "encryption_check",
] as const satisfies ReadonlyArray<keyof DatabaseRow>;

/**
 * Records a database being deleted, in the deletion's own transaction, so that it can be restored
 * until the window ends: its row as it is (every column), its group and locations, and the bytes
 * its files take (they count against the organization's storage while kept). The caller moves the
 * files aside once the deletion is committed. `groupDeletedAt`: set when it goes with its group.
 */
export async function keepDeleted(
  r: Repos,
  deps: KeepPorts,
  db: DatabaseRow & { primary_location: string },
  group: { id: string; name: string; locations: readonly string[] },
  groupDeletedAt?: string,
): Promise<void> {
  const now = deps.clock();
  const record: Record<string, unknown> = {};
  for (const column of DATABASE_COLUMNS) record[column] = db[column];
  await r.deletedDatabases.insert({
    id: db.id,
    org_id: db.org_id,
    group_id: group.id,
    group_name: group.name,
    name: db.name,
    deleted_at: isoTime(now),
    group_deleted_at: groupDeletedAt ?? null,
    purge_after: isoTime(new Date(now.getTime() + deps.deletedRetentionMs)),
    primary_location: db.primary_location,
    locations: JSON.stringify(group.locations),
    kept_bytes: deps.files.sizeOf(db.primary_location, db.id),
    record: JSON.stringify(record),
  });
}
