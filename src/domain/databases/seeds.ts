import { parseRfc3339 } from "../../lib/rfc3339.js";
import type { DatabaseWithPlacement } from "../../store/databases.js";
import { coreErrors } from "../core/errors.js";
import type { FileFacts } from "../core/ports.js";
import { databaseErrors } from "./errors.js";
import type { Seed } from "./ports.js";

export const SEED_TYPES = ["database", "database_upload", "dump"] as const;

const text = (v: unknown) => (typeof v === "string" && v.trim() !== "" ? v.trim() : undefined);

/**
 * Reads the `seed` object of a create request. Keys match without case, and the source database
 * may be given as `name` (the API reference, the TS client) or `value` (the turso CLI).
 */
export function parseSeed(raw: unknown): Seed {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw databaseErrors.seedNotObject();
  const s = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k.toLowerCase(), v]));
  const allowed = SEED_TYPES.join(", ");
  const type = text(s.type);
  if (type === undefined) throw databaseErrors.seedTypeMissing(allowed);
  if (!(SEED_TYPES as readonly string[]).includes(type)) throw databaseErrors.seedTypeUnknown(type, allowed);
  if (s.timestamp !== undefined && s.timestamp !== null && type !== "database") {
    throw databaseErrors.seedTimestampMisplaced();
  }
  if (type === "database") {
    const source = text(s.name) ?? text(s.value);
    if (!source) throw databaseErrors.seedSourceMissing();
    if (s.timestamp === undefined || s.timestamp === null || s.timestamp === "") return { type, source };
    if (typeof s.timestamp !== "string") throw databaseErrors.seedTimestampNotText();
    const parsed = parseRfc3339(s.timestamp);
    if (!parsed.ok) {
      throw databaseErrors.seedTimestampInvalid(parsed.error);
    }
    return { type, source, at: parsed.date.getTime() };
  }
  if (type === "dump") {
    const url = text(s.url);
    if (!url) throw databaseErrors.seedUrlMissing();
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
  const refuse = (why: string) => databaseErrors.badDumpUrl(why, orgSlug);
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
  deps: { files: Pick<FileFacts, "exists"> },
  source: DatabaseWithPlacement | undefined,
  name: string,
  tokenGroup: string | null,
): DatabaseWithPlacement {
  // Out of a group-scoped token's reach reads as absent, like a database of another organization.
  if (!source || (tokenGroup !== null && source.group_id !== tokenGroup)) {
    throw coreErrors.databaseNotFound(name);
  }
  if (source.awaiting_upload !== 0) {
    throw databaseErrors.sourceAwaitingUpload(name);
  }
  if (!deps.files.exists(source.primary_location, source.id)) {
    throw databaseErrors.sourceElsewhere(name, source.primary_location);
  }
  return source;
}
