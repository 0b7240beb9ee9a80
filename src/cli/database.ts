import { CliError } from "./errors.js";
import type { Session } from "./session.js";
import { type TokenOptions, tokenRequest } from "./token-permissions.js";

/** A Database object as the API answers it (the fields the CLI reads). */
export interface DatabaseInfo {
  Name: string;
  DbId: string;
  Hostname: string;
  http_url?: string;
  group: string;
  primaryRegion: string;
  regions: string[];
  block_reads: boolean;
  block_writes: boolean;
  is_schema: boolean;
  schema: string;
  archived: boolean;
  /** Only on a database encrypted at rest with its owner's key. */
  encryption_cipher?: string;
}

/** A database's address on the data plane and a token for it. */
export interface DatabaseAccess {
  name: string;
  /** The path-form HTTP URL, ending in `/`. */
  url: string;
  token: string;
}

/**
 * What to do when a database's data plane refuses the CLI: its token is a short-lived database
 * token, not the API token, so the API's hints would mislead.
 */
export const DATA_PLANE_HINTS: Partial<Record<number, string>> = {
  401: "the database token was refused (expired, or its credentials rotated): run the command again for a new one",
  403: "the database refused this: check its configuration (`shoal db show`) and your role",
  404: "check the database name (`shoal db list`)",
};

export function notFoundHint(org: string): Partial<Record<number, string>> {
  return { 404: `see the databases of organization ${org} with \`shoal db list\`` };
}

export async function getDatabase(s: Session, name: string): Promise<DatabaseInfo> {
  const org = await s.org();
  const r = await s.api.call<{ database: DatabaseInfo }>(
    "GET",
    await s.orgPath(`/databases/${encodeURIComponent(name)}`),
    {
      hints: notFoundHint(org),
    },
  );
  return r.database;
}

/** Mints a database token, as `shoal db tokens create` does. */
export async function mintDatabaseToken(s: Session, name: string, opts: TokenOptions = {}): Promise<string> {
  const path = await s.orgPath(`/databases/${encodeURIComponent(name)}/auth/tokens`);
  const r = await s.api.call<{ jwt: string }>("POST", path, {
    ...tokenRequest(opts),
    hints: notFoundHint(await s.org()),
  });
  return r.jwt;
}

/**
 * What a command needs to send SQL or fetch a copy: the database's URL by path (served on the
 * address the CLI already talks to, so no DNS is needed) and a short-lived token for it.
 */
export async function openDatabase(s: Session, name: string, readOnly = false): Promise<DatabaseAccess> {
  const db = await getDatabase(s, name);
  if (!db.http_url) {
    throw new CliError(
      `the server did not say where database ${name} is (no http_url)`,
      "upgrade the Shoal server",
    );
  }
  const token = await mintDatabaseToken(s, name, { readOnly, expiration: "1d" });
  return { name, url: db.http_url, token };
}
