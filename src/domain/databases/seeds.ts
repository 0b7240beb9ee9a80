import { mkdirSync } from "node:fs";
import path from "node:path";
import type { EngineConnection } from "../../engine/connection.js";
import { DumpError, importDump } from "../../engine/dump-import.js";
import { flushClosing } from "../../engine/handle-release.js";
import { restoreAsOf } from "../../engine/point-in-time.js";
import { createWithSchema, readSchema } from "../../engine/schema-copy.js";
import { DatabaseFileError, fileBytes, finishDatabaseFile, snapshotInto } from "../../engine/snapshot.js";
import { damagedMessage, isDamaged } from "../../engine/sqlite-errors.js";
import { ConflictError, InvalidError, NotFoundError, UnavailableError } from "../../errors.js";
import { schemaJournal } from "../../hosting/schema-propagation.js";
import { parseRfc3339 } from "../../lib/rfc3339.js";
import type { DatabaseWithPlacement } from "../../store/databases.js";
import type { Deps } from "../core/context.js";

export const SEED_TYPES = ["database", "database_upload", "dump"] as const;

/** A validated seed: where a new database's first content comes from. */
export type Seed =
  /** A copy of another database of the organization, now or (`at`, ms) as it was then. */
  | { type: "database"; source: string; at?: number }
  | { type: "dump"; url: string }
  /** No content until a SQLite file is uploaded through the data plane. */
  | { type: "database_upload" };

const text = (v: unknown) => (typeof v === "string" && v.trim() !== "" ? v.trim() : undefined);

/**
 * Reads the `seed` object of a create request. Keys match without case, and the source database
 * may be given as `name` (the API reference, the TS client) or `value` (the turso CLI).
 */
export function parseSeed(raw: unknown): Seed {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw new InvalidError('seed must be an object such as {"type": "database", "name": "my-db"}');
  const s = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k.toLowerCase(), v]));
  const allowed = SEED_TYPES.join(", ");
  const type = text(s.type);
  if (type === undefined) throw new InvalidError(`seed.type is required: one of ${allowed}`);
  if (!(SEED_TYPES as readonly string[]).includes(type))
    throw new InvalidError(`unknown seed type "${type}": use one of ${allowed}`);
  if (s.timestamp !== undefined && s.timestamp !== null && type !== "database") {
    throw new InvalidError('seed.timestamp only applies to seed type "database" (a point-in-time copy)');
  }
  if (type === "database") {
    const source = text(s.name) ?? text(s.value);
    if (!source)
      throw new InvalidError('seed type "database" needs seed.name (or seed.value): the database to copy');
    if (s.timestamp === undefined || s.timestamp === null || s.timestamp === "") return { type, source };
    if (typeof s.timestamp !== "string") throw new InvalidError("seed.timestamp must be an ISO-8601 time");
    const parsed = parseRfc3339(s.timestamp);
    if (!parsed.ok) {
      throw new InvalidError(
        `seed.timestamp must be an ISO-8601 time with a time zone, such as 2026-05-01T12:00:00Z: ${parsed.error}`,
      );
    }
    return { type, source, at: parsed.date.getTime() };
  }
  if (type === "dump") {
    const url = text(s.url);
    if (!url)
      throw new InvalidError(
        'seed type "dump" needs seed.url: the dump_url returned by POST .../databases/dumps',
      );
    return { type, url };
  }
  return { type: "database_upload" };
}

const DUMP_PATH = /^\/v1\/(?:organizations\/([^/]+)\/)?databases\/dumps\/([A-Za-z0-9_-]{22})\/?$/;

/**
 * The id of a dump from its URL. Only URLs this server handed out are accepted, and the server
 * never downloads anything: fetching a caller-supplied URL from inside the server would let anyone
 * make it reach addresses only it can reach (server-side request forgery).
 */
export function dumpIdFromUrl(url: string, orgSlug: string, host: string | undefined): string {
  const refuse = (why: string) =>
    new InvalidError(
      `seed.url ${why}: it must be a dump_url returned by POST /v1/organizations/${orgSlug}/databases/dumps on this server. Shoal doesn't download dumps from other addresses (fetching caller-supplied URLs from the server would expose its internal network); upload the dump there first`,
    );
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw refuse("is not a URL");
  }
  const m = DUMP_PATH.exec(parsed.pathname);
  if ((parsed.protocol !== "http:" && parsed.protocol !== "https:") || !m)
    throw refuse("is not a Shoal dump URL");
  if (host !== undefined && parsed.host.toLowerCase() !== host.toLowerCase())
    throw refuse(`points to another server (${parsed.host})`);
  if (m[1] !== undefined && decodeSegment(m[1]) !== orgSlug) throw refuse("belongs to another organization");
  return m[2]!;
}

/** A percent-encoded path segment, or undefined when its escapes are malformed. */
function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** The source of a copy: a database of the organization, in the caller's reach, with content. */
export function requireSeedSource(
  deps: Deps,
  source: DatabaseWithPlacement | undefined,
  name: string,
  tokenGroup: string | null,
): DatabaseWithPlacement {
  // Out of a group-scoped token's reach reads as absent, like a database of another organization.
  if (!source || (tokenGroup !== null && source.group_id !== tokenGroup)) {
    throw new NotFoundError(`could not find database with name ${name}: record not found`);
  }
  if (source.awaiting_upload !== 0) {
    throw new InvalidError(`database ${name} has no content to copy yet: it is waiting for an upload`);
  }
  if (!deps.files.exists(source.primary_location, source.id)) {
    throw new UnavailableError(
      `the primary of database ${name} is not served by this node; send the request to the node holding location ${source.primary_location}`,
    );
  }
  return source;
}

/** What a built seed adds to the new database's row. */
export interface SeedFacts {
  parentId?: string;
  branchedAt?: string;
}

/**
 * Writes a copy of `source` into `dest`: its current committed state (a consistent snapshot taken
 * while writes go on), or its state at `at` rebuilt from its replication history.
 */
export function copyDatabase(
  deps: Deps,
  source: DatabaseWithPlacement,
  dest: string,
  at: number | undefined,
): SeedFacts {
  const file = deps.files.path(source.primary_location, source.id);
  const now = deps.clock().getTime();
  if (at === undefined) {
    try {
      const conn = deps.pool.checkout(file);
      try {
        snapshotInto(conn, dest);
      } finally {
        deps.pool.checkin(conn);
      }
    } catch (e) {
      if (isDamaged(e))
        throw new ConflictError(`database ${source.name} can't be copied: ${damagedMessage(e)}`);
      if (e instanceof DatabaseFileError)
        throw new ConflictError(`database ${source.name} can't be copied: ${e.message}`);
      throw e;
    }
    return { parentId: source.id, branchedAt: new Date(now).toISOString() };
  }
  // A connection stays open meanwhile, so SQLite can't checkpoint the WAL being read on a close.
  // A file SQLite can't open is damaged; nothing can checkpoint it, and its history may still
  // rebuild the past (that is how such a database is recovered).
  let conn: EngineConnection | undefined;
  try {
    conn = deps.pool.checkout(file);
  } catch (e) {
    if (!isDamaged(e)) throw e;
  }
  let outcome: ReturnType<typeof restoreAsOf>;
  try {
    outcome = restoreAsOf(deps.frameLogs.get(file), at, dest, {
      createdAt: Date.parse(source.created_at),
      now,
    });
  } catch (e) {
    if (e instanceof DatabaseFileError)
      throw new InvalidError(`the restored database is damaged: ${e.message}`);
    throw e;
  } finally {
    if (conn) deps.pool.checkin(conn);
  }
  if (outcome.kind === "future") {
    throw new InvalidError(
      `seed.timestamp ${new Date(at).toISOString()} is in the future (the server's time is ${new Date(outcome.now).toISOString()})`,
    );
  }
  if (outcome.kind === "before-history") {
    throw new InvalidError(
      `seed.timestamp ${new Date(at).toISOString()} is older than the history of database ${source.name}: it goes back to ${new Date(outcome.earliest).toISOString()}`,
    );
  }
  return { parentId: source.id, branchedAt: new Date(at).toISOString() };
}

/** Loads an uploaded dump into `dest`; a dump that fails leaves no file. */
export function loadDump(deps: Deps, dumpId: string, dest: string, maxBytes: number): void {
  let text: string;
  try {
    text = deps.dumps.text(dumpId);
  } catch (e) {
    // Used by another create that finished first, or expired since it was checked.
    if ((e as NodeJS.ErrnoException).code === "ENOENT") {
      throw new InvalidError(
        "seed.url names a dump that doesn't exist any more: it was used or expired; upload it again",
      );
    }
    throw e;
  }
  try {
    importDump(text, dest, maxBytes > 0 ? Math.floor(maxBytes / 4096) : 0);
  } catch (e) {
    if (e instanceof DumpError) throw new InvalidError(`the dump could not be loaded: ${e.message}`);
    throw e;
  }
}

/** What a new database starts from, resolved and checked before anything is built. */
export interface ContentPlan {
  seed: Seed | undefined;
  /** The database copied by a `database` seed. */
  source?: DatabaseWithPlacement;
  /** The schema database a child follows. */
  schemaParent?: DatabaseWithPlacement;
  dumpId?: string;
}

/** The row facts of a built database beyond its name and placement. */
export interface BuiltContent extends SeedFacts {
  schemaId?: string;
  schemaSeq?: number;
  awaitingUpload?: boolean;
}

/**
 * Builds a new database's primary file at `dest` (which must not exist) from its plan: empty, a
 * copy, a dump, an empty file waiting for an upload, or a schema database's schema. Connections
 * opened here are closed before it returns, and on failure nothing is left at `dest`.
 */
export async function buildContent(
  deps: Deps,
  location: string,
  id: string,
  plan: ContentPlan,
  maxBytes: number,
): Promise<BuiltContent> {
  const dest = deps.files.path(location, id);
  mkdirSync(path.dirname(dest), { recursive: true });
  try {
    const built = await build(deps, location, id, plan, dest, maxBytes);
    await flushClosing();
    const bytes = fileBytes(dest);
    if (maxBytes > 0 && bytes > maxBytes) {
      throw new InvalidError(
        `the seed makes a database of ${bytes} bytes, more than its size_limit of ${maxBytes} bytes`,
      );
    }
    return built;
  } catch (e) {
    await flushClosing();
    deps.files.remove(location, id);
    throw e;
  }
}

async function build(
  deps: Deps,
  location: string,
  id: string,
  plan: ContentPlan,
  dest: string,
  maxBytes: number,
): Promise<BuiltContent> {
  const { seed } = plan;
  if (plan.schemaParent) {
    const parent = plan.schemaParent;
    // The journal position first: a change committed meanwhile is in the schema copied, or after it.
    const schemaSeq = schemaJournal(deps, parent).lastSeq();
    const conn = deps.pool.checkout(deps.files.path(parent.primary_location, parent.id));
    let objects: ReturnType<typeof readSchema>;
    try {
      objects = readSchema(conn);
    } finally {
      deps.pool.checkin(conn);
    }
    createWithSchema(dest, objects);
    // That connection must be closed before the file changes journal mode.
    await flushClosing();
    finishDatabaseFile(dest);
    return { schemaId: parent.id, schemaSeq };
  }
  if (seed?.type === "database") {
    const source = plan.source!;
    try {
      return copyDatabase(deps, source, dest, seed.at);
    } catch (e) {
      // Deleted between the checks and the copy: as if it had never been there.
      if (!deps.files.exists(source.primary_location, source.id)) {
        throw new NotFoundError(
          `could not find database with name ${source.name}: it was deleted while being copied`,
        );
      }
      throw e;
    }
  }
  if (seed?.type === "dump") {
    loadDump(deps, plan.dumpId!, dest, maxBytes);
    return {};
  }
  deps.files.create(location, id);
  return seed?.type === "database_upload" ? { awaitingUpload: true } : {};
}
