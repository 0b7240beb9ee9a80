import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  addMember,
  createDatabase,
  createGroup,
  createTeam,
  createUser,
  type TestUser,
  uniqueName,
} from "../helpers/factories.js";
import { client } from "../helpers/http.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let owner: TestUser;
let member: TestUser;
let org: string;

beforeAll(async () => {
  h = await startTestShoal();
  owner = await createUser(h);
  member = await createUser(h);
  org = await createTeam(owner);
  await addMember(owner, org, member.username, "member");
  await createGroup(owner, org, "default");
  await createGroup(owner, org, "other", "aws-eu-west-1");
  await createDatabase(owner, org, "in-default", "default");
  await createDatabase(owner, org, "in-other", "other");
});
afterAll(() => h.close());

async function mint(u: TestUser, body: unknown) {
  return u.api.post(`/v1/auth/api-tokens/${uniqueName("t")}`, body);
}

async function mintOk(u: TestUser, body: unknown) {
  const r = await mint(u, body);
  expect(r.status, r.text).toBe(200);
  return { id: r.body.id as string, api: client(h.url, r.body.token) };
}

describe("group-scoped API tokens", () => {
  it("a read-only token lists its group's databases but creates nothing", async () => {
    const t = await mintOk(owner, { organization: org, group: "default", scopes: ["read-only"] });
    const list = await t.api.get(`/v1/organizations/${org}/databases`);
    expect(list.status).toBe(200);
    expect(list.body.databases.map((d: { Name: string }) => d.Name)).toEqual(["in-default"]);
    const groups = await t.api.get(`/v1/organizations/${org}/groups`);
    expect(groups.body.groups.map((g: { name: string }) => g.name)).toEqual(["default"]);
    const create = await t.api.post(`/v1/organizations/${org}/databases`, { name: "nope", group: "default" });
    expect(create.status).toBe(403);
    expect(create.body.error).toContain("db:create");
    expect((await owner.api.get(`/v1/organizations/${org}/databases/nope`)).status).toBe(404);
  });

  it("acts only on its own group, even with every scope", async () => {
    const t = await mintOk(owner, { organization: org, group: "default", scopes: ["full-access"] });
    expect((await t.api.get(`/v1/organizations/${org}/databases/in-other`)).status).toBe(403);
    expect((await t.api.get(`/v1/organizations/${org}/groups/other`)).status).toBe(403);
    const elsewhere = await t.api.post(`/v1/organizations/${org}/databases`, { name: "x1", group: "other" });
    expect(elsewhere.status).toBe(403);
    const here = await t.api.post(`/v1/organizations/${org}/databases`, { name: "x1", group: "default" });
    expect(here.status, here.text).toBe(200);
    // Organization-level actions are never a group token's.
    expect((await t.api.post(`/v1/organizations/${org}/groups`, { name: "g3" })).status).toBe(403);
    expect((await t.api.patch(`/v1/organizations/${org}`, { overages: true })).status).toBe(403);
    expect((await t.api.post("/v1/auth/api-tokens/from-group-token")).status).toBe(403);
  });

  it("reports its expanded scopes, never a preset", async () => {
    const r = await mint(owner, { organization: org, group: "default", scopes: ["read-only", "db:create"] });
    const listed = (await owner.api.get("/v1/auth/api-tokens")).body.tokens.find(
      (t: { id: string }) => t.id === r.body.id,
    );
    expect(listed).toMatchObject({ organization: org, group: "default", scopes: ["read", "db:create"] });
  });

  it("is refused to members, and needs a known group and at least one known scope", async () => {
    const byMember = await mint(member, { organization: org, group: "default", scopes: ["read"] });
    expect(byMember.status).toBe(403);
    expect((await mint(owner, { organization: org, group: "missing", scopes: ["read"] })).status).toBe(404);
    expect((await mint(owner, { organization: org, group: "default" })).status).toBe(400);
    expect((await mint(owner, { organization: org, group: "default", scopes: ["drop"] })).status).toBe(400);
    expect((await mint(owner, { organization: org, scopes: ["read"] })).status).toBe(400);
    expect((await mint(owner, { group: "default", scopes: ["read"] })).status).toBe(400);
  });

  it("dies with its group", async () => {
    await createGroup(owner, org, "doomed");
    const t = await mintOk(owner, { organization: org, group: "doomed", scopes: ["read"] });
    expect((await t.api.get(`/v1/organizations/${org}/groups/doomed`)).status).toBe(200);
    expect((await owner.api.delete(`/v1/organizations/${org}/groups/doomed`)).status).toBe(200);
    expect((await t.api.get("/v1/auth/validate")).status).toBe(401);
  });
});

describe("organization-scoped API tokens", () => {
  it("act in their organization only", async () => {
    const t = await mintOk(owner, { organization: org });
    expect((await t.api.get(`/v1/organizations/${org}/databases`)).status).toBe(200);
    expect((await t.api.get(`/v1/organizations/${owner.username}/databases`)).status).toBe(403);
    const orgs = (await t.api.get("/v1/organizations")).body.map((o: { slug: string }) => o.slug);
    expect(orgs).toEqual([org]);
    // A restricted token can't mint a broader one.
    expect((await t.api.post("/v1/auth/api-tokens/broader")).status).toBe(403);
    expect((await t.api.post("/v1/auth/api-tokens/same", { organization: org })).status).toBe(200);
  });

  it("are minted in the CLI's v2 form too", async () => {
    const r = await owner.api.post("/v2/auth/api-tokens/cli-form", { organization: org });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({
      token: { name: "cli-form", id: expect.any(String), value: expect.any(String) },
    });
    const t = client(h.url, r.body.token.value);
    expect((await t.get("/v1/auth/validate")).body).toEqual({ exp: -1 });
  });
});

describe("the organization's token list", () => {
  it("shows owners every member's tokens with their owner, and members their own", async () => {
    const mine = await mintOk(member, { organization: org });
    const ours = await owner.api.get(`/v1/organizations/${org}/api-tokens`);
    const entry = ours.body.tokens.find((t: { id: string }) => t.id === mine.id);
    expect(entry.owner).toEqual({ username: member.username, email: `${member.username}@example.com` });
    const theirs = await member.api.get(`/v1/organizations/${org}/api-tokens`);
    expect(theirs.body.tokens.map((t: { id: string }) => t.id)).toEqual([mine.id]);
    expect(theirs.body.tokens[0].owner).toBeUndefined();
    // Unrestricted tokens belong to no organization.
    const unrestricted = await owner.api.post("/v1/auth/api-tokens/everywhere");
    expect(ours.body.tokens.map((t: { id: string }) => t.id)).not.toContain(unrestricted.body.id);
  });

  it("revokes by id; another organization's or an unrestricted token is not found", async () => {
    const victim = await mintOk(member, { organization: org });
    const unrestricted = await owner.api.post("/v1/auth/api-tokens/not-in-org");
    const personal = await mintOk(owner, { organization: owner.username });
    const path = (id: string) => `/v1/organizations/${org}/api-tokens/${id}`;
    expect((await owner.api.delete(path(unrestricted.body.id))).status).toBe(404);
    expect((await owner.api.delete(path(personal.id))).status).toBe(404);
    const other = await mintOk(owner, { organization: org });
    expect((await member.api.delete(path(other.id))).status).toBe(404);
    const r = await owner.api.delete(path(victim.id));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ token: victim.id });
    expect((await victim.api.get("/v1/auth/validate")).status).toBe(401);
    const audit = await owner.api.get(`/v1/organizations/${org}/audit-logs`);
    expect(audit.body.audit_logs.map((l: { code: string }) => l.code)).toContain("user-token-delete");
  });
});

describe("restricted tokens never reach beyond their limits", () => {
  /** A restricted token of the instance administrator, in its own team organization. */
  async function adminToken(body: Record<string, unknown>) {
    const admin = { username: "admin", token: h.adminToken, api: client(h.url, h.adminToken) };
    const r = await admin.api.post(`/v1/auth/api-tokens/${uniqueName("adm")}`, body);
    expect(r.status, r.text).toBe(200);
    return client(h.url, r.body.token);
  }

  it("refuses instance administration to an administrator's organization- or group-scoped token", async () => {
    const adminApi = client(h.url, h.adminToken);
    const adminOrg = (await adminApi.post("/v1/organizations", { name: uniqueName("ops") })).body.organization
      .slug as string;
    await adminApi.post(`/v1/organizations/${adminOrg}/groups`, { name: "default" });
    for (const body of [
      { organization: adminOrg },
      { organization: adminOrg, group: "default", scopes: ["read-only"] },
    ]) {
      const t = await adminToken(body);
      const made = await t.post("/v1/admin/users", {
        username: uniqueName("x"),
        email: "x@example.com",
        admin: true,
      });
      expect(made.status, made.text).toBe(403);
      expect(made.body.error).toContain("needs an unrestricted API token");
      expect((await t.get("/v1/admin/users")).status).toBe(403);
      expect((await t.get("/v1/admin/plans")).status).toBe(403);
      expect((await t.get("/v1/admin/nodes")).status).toBe(403);
      expect((await t.post("/v1/admin/plans", { name: uniqueName("p"), price: "0" })).status).toBe(403);
    }
    expect((await adminApi.get("/v1/admin/users")).status).toBe(200);
  });

  it("lets a group-scoped token see and revoke only itself among its user's tokens", async () => {
    const name = uniqueName("g");
    const minted = await owner.api.post(`/v1/auth/api-tokens/${name}`, {
      organization: org,
      group: "default",
      scopes: ["read-only"],
    });
    const t = client(h.url, minted.body.token);
    const listed = await t.get("/v1/auth/api-tokens");
    expect(listed.body.tokens.map((x: { name: string }) => x.name)).toEqual([name]);
    const own = (await owner.api.get("/v1/auth/api-tokens")).body.tokens.find(
      (x: { organization?: string }) => x.organization === undefined,
    );
    const escalate = await t.delete(`/v1/auth/api-tokens/${own.name}`);
    expect(escalate.status).toBe(403);
    expect((await owner.api.get("/v1/organizations")).status).toBe(200);
    expect((await t.delete(`/v1/auth/api-tokens/${name}`)).status).toBe(200);
    expect((await t.get("/v1/auth/api-tokens")).status).toBe(401);
  });

  it("lets an organization-scoped token see and revoke only its organization's tokens", async () => {
    const orgToken = await mintOk(owner, { organization: org });
    const listed = await orgToken.api.get("/v1/auth/api-tokens");
    expect(listed.status).toBe(200);
    for (const x of listed.body.tokens) expect(x.organization).toBe(org);
    const unrestricted = (await owner.api.get("/v1/auth/api-tokens")).body.tokens.find(
      (x: { organization?: string }) => x.organization === undefined,
    );
    expect((await orgToken.api.delete(`/v1/auth/api-tokens/${unrestricted.name}`)).status).toBe(403);
  });

  it("shows a group-scoped token only its group's tokens in the organization's list", async () => {
    await mintOk(owner, { organization: org, group: "other", scopes: ["read-only"] });
    const t = await mintOk(owner, { organization: org, group: "default", scopes: ["read-only"] });
    const r = await t.api.get(`/v1/organizations/${org}/api-tokens`);
    expect(r.status, r.text).toBe(200);
    expect(r.body.tokens.length).toBeGreaterThan(0);
    for (const x of r.body.tokens) expect(x.group).toBe("default");
  });

  it("refuses to revoke the last unrestricted token of the instance administrators", async () => {
    const lone = await startTestShoal();
    try {
      const admin = client(lone.url, lone.adminToken);
      const names = (await admin.get("/v1/auth/api-tokens")).body.tokens.map((x: { name: string }) => x.name);
      expect(names).toHaveLength(1);
      const r = await admin.delete(`/v1/auth/api-tokens/${names[0]}`);
      expect(r.status).toBe(409);
      expect(r.body.error).toContain("last unrestricted API token");
      expect((await admin.get("/v1/admin/users")).status).toBe(200);
      expect((await admin.post("/v1/auth/api-tokens/spare")).status).toBe(200);
      expect((await admin.delete(`/v1/auth/api-tokens/${names[0]}`)).status).toBe(200);
    } finally {
      await lone.close();
    }
  });
});
