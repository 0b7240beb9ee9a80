import { canonicalEntry, MAX_ALLOWED_IPS } from "../../lib/ip-allowlist.js";
import type { DatabasePatch } from "../../store/databases.js";
import { requireDatabase } from "../core/access-tx.js";
import { audit } from "../core/audit-tx.js";
import { parseSizeLimit } from "../core/names.js";
import { databaseErrors } from "./errors.js";
import type { DatabaseCtx } from "./ports.js";
import { allowedIpsOf } from "./views.js";

export interface DatabaseConfiguration {
  /** Largest size the database may grow to, as given (`256mb`, `1073741824`); null = no limit. */
  sizeLimit: string | null;
  allowAttach: boolean;
  blockReads: boolean;
  blockWrites: boolean;
  deleteProtection: boolean;
  /** Addresses and CIDR blocks the data plane serves; empty = every address. */
  allowedIps: string[];
}

/** Fields to change; an absent (or null) field stays as it is. An empty size limit removes the limit. */
export interface ConfigurationPatch {
  sizeLimit?: string;
  allowAttach?: boolean;
  blockReads?: boolean;
  blockWrites?: boolean;
  deleteProtection?: boolean;
  /** The new allowlist; `[]` removes it. */
  allowedIps?: readonly string[];
  /** AWS PrivateLink endpoints: Shoal has none, so only an empty list is accepted. */
  allowedAwsVpcIds?: readonly string[];
  /** Refused whenever present: a database is encrypted (or not) from its creation on. */
  remoteEncryption?: unknown;
}

type Row = { size_limit: string | null; allowed_ips: string | null } & Record<
  "allow_attach" | "block_reads" | "block_writes" | "delete_protection",
  number
>;

function toConfiguration(r: Row): DatabaseConfiguration {
  return {
    sizeLimit: r.size_limit,
    allowAttach: r.allow_attach === 1,
    blockReads: r.block_reads === 1,
    blockWrites: r.block_writes === 1,
    deleteProtection: r.delete_protection === 1,
    allowedIps: allowedIpsOf(r.allowed_ips),
  };
}

/** The allowlist as stored: canonical, without duplicates; null when it allows everyone. */
function storedAllowlist(entries: readonly string[]): string | null {
  if (entries.length > MAX_ALLOWED_IPS) {
    throw databaseErrors.tooManyAllowedIps(MAX_ALLOWED_IPS, entries.length);
  }
  const canonical = entries.map((e) => {
    try {
      return canonicalEntry(e);
    } catch (err) {
      throw databaseErrors.invalidAllowedIp((err as Error).message);
    }
  });
  return canonical.length === 0 ? null : JSON.stringify([...new Set(canonical)]);
}

export async function getDatabaseConfiguration(
  ctx: DatabaseCtx,
  slug: string,
  name: string,
): Promise<DatabaseConfiguration> {
  return ctx.deps.store.read(async (r) => {
    const { db } = await requireDatabase(r, ctx.actor, slug, name, "read");
    return toConfiguration(db);
  });
}

/** Changes a database's configuration; the data plane applies it from the next statement on. */
export async function updateDatabaseConfiguration(
  ctx: DatabaseCtx,
  slug: string,
  name: string,
  patch: ConfigurationPatch,
): Promise<DatabaseConfiguration> {
  const size = patch.sizeLimit?.trim().toLowerCase();
  if (size !== undefined && size !== "" && size !== "0") parseSizeLimit(size);
  if (patch.allowedAwsVpcIds && patch.allowedAwsVpcIds.length > 0) {
    throw databaseErrors.noPrivateLink();
  }
  if (patch.remoteEncryption !== undefined && patch.remoteEncryption !== null) {
    throw databaseErrors.encryptionNotOnConfiguration();
  }
  const allowedIps = patch.allowedIps === undefined ? undefined : storedAllowlist(patch.allowedIps);
  const flag = (v: boolean | undefined) => (v === undefined ? undefined : v ? 1 : 0);
  const changes: DatabasePatch = Object.fromEntries(
    Object.entries({
      size_limit: size === undefined ? undefined : size === "" || size === "0" ? null : size,
      allow_attach: flag(patch.allowAttach),
      block_reads: flag(patch.blockReads),
      block_writes: flag(patch.blockWrites),
      delete_protection: flag(patch.deleteProtection),
      allowed_ips: allowedIps,
    }).filter(([, v]) => v !== undefined),
  );
  const updated = await ctx.deps.store.write(async (r) => {
    const { org, db } = await requireDatabase(r, ctx.actor, slug, name, "db:configure");
    // Attaching reads the file from another database's connection, which doesn't have this one's key.
    if (changes.allow_attach === 1 && db.encryption_cipher !== null)
      throw databaseErrors.attachEncrypted(name);
    await r.databases.update(db.id, changes);
    if (changes.delete_protection !== undefined && changes.delete_protection !== db.delete_protection) {
      const code = changes.delete_protection === 1 ? "db-protect" : "db-unprotect";
      await audit(
        r,
        ctx,
        org.id,
        code,
        `delete protection of ${name} turned ${changes.delete_protection ? "on" : "off"}`,
        {
          database: name,
        },
      );
    }
    const rest = Object.keys(changes).filter((k) => k !== "delete_protection");
    if (rest.length > 0) {
      await audit(r, ctx, org.id, "db-configure", `configuration of ${name} changed`, {
        database: name,
        ...Object.fromEntries(rest.map((k) => [k, changes[k as keyof DatabasePatch]])),
      });
    }
    return toConfiguration({ ...db, ...changes });
  });
  ctx.deps.directory.invalidate();
  return updated;
}
