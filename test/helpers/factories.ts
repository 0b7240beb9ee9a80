import { randomBytes } from "node:crypto";
import { expect } from "vitest";
import { type Client, client } from "./http.js";
import type { TestShoal } from "./shoal.js";

/** A short unique lowercase name, so tests sharing a server never collide. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(3).toString("hex")}`;
}

export interface TestUser {
  username: string;
  token: string;
  api: Client;
}

/** Creates a user through the admin API and returns its first token. */
export async function createUser(h: TestShoal, username = uniqueName("user")): Promise<TestUser> {
  const admin = client(h.url, h.adminToken);
  const r = await admin.post("/v1/admin/users", { username, email: `${username}@example.com` });
  expect(r.status, r.text).toBe(200);
  return { username, token: r.body.token, api: client(h.url, r.body.token) };
}

/** Creates a team organization owned by `owner`. */
export async function createTeam(owner: TestUser, name = uniqueName("team")): Promise<string> {
  const r = await owner.api.post("/v1/organizations", { name });
  expect(r.status, r.text).toBe(200);
  return r.body.organization.slug as string;
}

export async function addMember(owner: TestUser, org: string, username: string, role: string): Promise<void> {
  const r = await owner.api.post(`/v1/organizations/${org}/members`, { username, role });
  expect(r.status, r.text).toBe(200);
}

export async function createGroup(u: TestUser, org: string, name = "default", location = "aws-us-east-1") {
  const r = await u.api.post(`/v1/organizations/${org}/groups`, { name, location });
  expect(r.status, r.text).toBe(200);
  return r.body.group;
}

export async function createDatabase(u: TestUser, org: string, name: string, group = "default") {
  const r = await u.api.post(`/v1/organizations/${org}/databases`, { name, group });
  expect(r.status, r.text).toBe(200);
  return r.body.database as { DbId: string; Hostname: string; Name: string };
}
