import { DumpTooLargeError } from "../../engine/dump-files.js";
import { requireOrgAccess } from "../core/access-tx.js";
import { audit } from "../core/audit-tx.js";
import { databaseErrors } from "./errors.js";
import type { DatabaseCtx } from "./ports.js";

/** Largest SQL dump accepted (it is read whole when it seeds a database). */
export const MAX_DUMP_BYTES = 256 * 1024 ** 2;
/** Dumps an organization may keep waiting at once, in bytes: uploads can't fill the disk. */
export const MAX_PENDING_DUMP_BYTES = 1024 ** 3;

export interface StoredDump {
  id: string;
  bytes: number;
  expiresAt: string;
}

/**
 * Stores an uploaded SQL dump for a later `seed: {type: "dump", url}`, streaming it to disk with
 * a size limit. Uploading one is part of creating a database, so it takes the same right.
 */
export async function uploadDump(
  ctx: DatabaseCtx,
  slug: string,
  content: AsyncIterable<Uint8Array>,
): Promise<StoredDump> {
  const { deps } = ctx;
  const { org } = await deps.store.read((r) => requireOrgAccess(r, ctx.actor, slug, "db:create"));
  deps.dumps.sweep();
  const room = MAX_PENDING_DUMP_BYTES - deps.dumps.pendingBytes(org.id);
  if (room <= 0) {
    throw databaseErrors.dumpRoomFull(org.slug, MAX_PENDING_DUMP_BYTES);
  }
  let info: Awaited<ReturnType<typeof deps.dumps.save>>;
  try {
    info = await deps.dumps.save(org.id, content, Math.min(MAX_DUMP_BYTES, room));
  } catch (e) {
    if (e instanceof DumpTooLargeError) {
      throw databaseErrors.dumpTooLarge(e.maxBytes, e.maxBytes < MAX_DUMP_BYTES);
    }
    throw e;
  }
  if (info.bytes === 0) {
    deps.dumps.remove(info.id);
    throw databaseErrors.dumpEmpty();
  }
  try {
    await deps.store.write((r) =>
      audit(r, ctx, org.id, "db-dump-upload", `SQL dump of ${info.bytes} bytes uploaded`, {
        bytes: info.bytes,
      }),
    );
  } catch (e) {
    deps.dumps.remove(info.id);
    throw e;
  }
  return { id: info.id, bytes: info.bytes, expiresAt: new Date(info.expiresAt).toISOString() };
}
