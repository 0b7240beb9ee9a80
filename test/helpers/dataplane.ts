import { expect } from "vitest";
import { createDatabase, createGroup, createUser, type TestUser, uniqueName } from "./factories.js";
import { resolveToLoopback } from "./loopback-dns.js";
import type { TestShoal } from "./shoal.js";

resolveToLoopback(".shoal.test");

export interface TestDatabase {
  user: TestUser;
  org: string;
  name: string;
  id: string;
  hostname: string;
  /** A full-access token for the database. */
  token: string;
  /** The four ways a client can address the database. */
  urls: { httpPath: string; wsPath: string; httpHost: string; wsHost: string };
}

export function databaseUrls(h: TestShoal, org: string, name: string, hostname: string) {
  const port = new URL(h.url).port;
  return {
    httpPath: `${h.url}/db/${org}/${name}/`,
    wsPath: `${h.url.replace("http:", "ws:")}/db/${org}/${name}`,
    httpHost: `http://${hostname}:${port}`,
    wsHost: `ws://${hostname}:${port}`,
  };
}

/** Mints a database token through the management API. */
export async function mintToken(
  u: TestUser,
  org: string,
  db: string,
  query = "",
  body: unknown = undefined,
): Promise<string> {
  const r = await u.api.post(`/v1/organizations/${org}/databases/${db}/auth/tokens${query}`, body);
  expect(r.status, r.text).toBe(200);
  return r.body.jwt;
}

/** A user, a group and a database with a token, ready for SQL. */
export async function setupDatabase(
  h: TestShoal,
  opts: { user?: TestUser; name?: string; group?: string } = {},
) {
  const user = opts.user ?? (await createUser(h));
  const org = user.username;
  const group = opts.group ?? "default";
  const groups = await user.api.get(`/v1/organizations/${org}/groups/${group}`);
  if (groups.status === 404) await createGroup(user, org, group);
  const name = opts.name ?? uniqueName("db");
  const created = await createDatabase(user, org, name, group);
  const token = await mintToken(user, org, name);
  return {
    user,
    org,
    name,
    id: created.DbId,
    hostname: created.Hostname,
    token,
    urls: databaseUrls(h, org, name, created.Hostname),
  } satisfies TestDatabase;
}

const PIPELINE_TIMEOUT_MS = 30_000;

/** Posts a raw Hrana pipeline to a database's base URL (ending in `/`). */
export async function pipeline(
  base: string,
  token: string | undefined,
  body: unknown,
  version: "v2" | "v3" = "v2",
): Promise<{ status: number; contentType: string | null; body: any }> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  // A request that hangs fails here, naming its URL, instead of as the test's own timeout.
  const url = `${base}${version}/pipeline`;
  const signal = AbortSignal.timeout(PIPELINE_TIMEOUT_MS);
  const failed = (e: unknown): never => {
    if (signal.aborted) throw new Error(`no answer from ${url} within ${PIPELINE_TIMEOUT_MS} ms`);
    throw e;
  };
  const res = await fetch(url, { method: "POST", headers, body: JSON.stringify(body), signal }).catch(failed);
  const text = await res.text().catch(failed);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: res.status, contentType: res.headers.get("content-type"), body: parsed };
}

export const sql = (text: string, args: unknown[] = []) => ({ type: "execute", stmt: { sql: text, args } });
