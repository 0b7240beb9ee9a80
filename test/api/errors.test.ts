import { readdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  addMember,
  createDatabase,
  createGroup,
  createTeam,
  createUser,
  type TestUser,
} from "../helpers/factories.js";
import { call } from "../helpers/http.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let owner: TestUser;
let viewer: TestUser;
let stranger: TestUser;
let team: string;

beforeAll(async () => {
  h = await startTestShoal();
  owner = await createUser(h);
  viewer = await createUser(h);
  stranger = await createUser(h);
  team = await createTeam(owner);
  await addMember(owner, team, viewer.username, "viewer");
  await createGroup(owner, team, "default", "aws-us-east-1");
  await createDatabase(owner, team, "existing");
});
afterAll(() => h.close());

const dbs = `/v1/organizations/${"{org}"}/databases`;
const at = (p: string) => p.replace("{org}", team);

async function filesOnDisk(): Promise<string[]> {
  const root = path.join(h.dataDir, "locations");
  const out: string[] = [];
  for (const loc of await readdir(root).catch(() => [])) {
    for (const f of await readdir(path.join(root, loc))) out.push(`${loc}/${f}`);
  }
  return out.sort();
}

async function databaseNames(): Promise<string[]> {
  const r = await owner.api.get(at(dbs));
  return r.body.databases.map((d: { Name: string }) => d.Name).sort();
}

describe("401: missing, malformed, unknown or revoked tokens", () => {
  it("refuses a request with no Authorization header", async () => {
    const r = await call(h.url, "GET", "/v1/organizations");
    expect(r.status).toBe(401);
    expect(r.body.error).toMatch(/Authorization/);
  });

  it("refuses a non-Bearer scheme", async () => {
    const r = await call(h.url, "GET", "/v1/organizations", {
      headers: { authorization: `Basic ${owner.token}` },
    });
    expect(r.status).toBe(401);
  });

  it("answers a malformed token with Turso's words and what an API token looks like", async () => {
    const r = await call(h.url, "GET", "/v1/organizations", { token: "abc" });
    expect(r.status).toBe(401);
    expect(r.body.error).toMatch(
      /^token contains an invalid number of segments: this is no API token of this service \(they are JWTs/,
    );
    expect(r.body.error).toMatch(
      /check that the whole token was copied, or mint one with POST \/v1\/auth\/api-tokens/,
    );
    // A token cut short on copying: two parts.
    const cut = await call(h.url, "GET", "/v1/organizations", {
      token: owner.token.split(".").slice(0, 2).join("."),
    });
    expect(cut.body.error).toMatch(/three parts separated by dots/);
  });

  it("tells someone who sends a database token to the management API to use an API token", async () => {
    await createDatabase(owner, team, "token-mixup");
    const minted = await call(h.url, "POST", `/v1/organizations/${team}/databases/token-mixup/auth/tokens`, {
      token: owner.token,
    });
    const r = await call(h.url, "GET", "/v1/organizations", { token: minted.body.jwt });
    expect(r.status).toBe(401);
    expect(r.body.error).toMatch(
      /^the token is a database token, .*mint one with POST \/v1\/auth\/api-tokens/,
    );
  });

  it("refuses a well-formed token it never issued", async () => {
    const forged = `${owner.token.split(".").slice(0, 2).join(".")}.AAAA`;
    const r = await call(h.url, "GET", "/v1/organizations", { token: forged });
    expect(r.status).toBe(401);
  });

  it("refuses a revoked token on its very next request", async () => {
    const minted = await owner.api.post("/v1/auth/api-tokens/short-lived");
    const t = minted.body.token as string;
    expect((await call(h.url, "GET", "/v1/organizations", { token: t })).status).toBe(200);
    expect((await owner.api.delete("/v1/auth/api-tokens/short-lived")).status).toBe(200);
    expect((await call(h.url, "GET", "/v1/organizations", { token: t })).status).toBe(401);
  });
});

describe("403: not a member, or a role that doesn't allow it", () => {
  it("refuses a non-member on every organization route", async () => {
    expect((await stranger.api.get(at(dbs))).status).toBe(403);
    expect((await stranger.api.post(at(dbs), { name: "x", group: "default" })).status).toBe(403);
    expect((await stranger.api.patch(`/v1/organizations/${team}`, { overages: true })).status).toBe(403);
  });

  it("gives an unknown organization the same 403 as a foreign one, so slugs can't be probed", async () => {
    const unknown = await stranger.api.get("/v1/organizations/no-such-org/databases");
    const foreign = await stranger.api.get(at(dbs));
    expect(unknown.status).toBe(403);
    expect(unknown.body.error.replace("no-such-org", team)).toBe(foreign.body.error);
  });

  it("lets a viewer read but not change", async () => {
    expect((await viewer.api.get(at(dbs))).status).toBe(200);
    const r = await viewer.api.patch(`/v1/organizations/${team}`, { overages: true });
    expect(r.status).toBe(403);
    expect((await viewer.api.post(at(dbs), { name: "by-viewer", group: "default" })).status).toBe(403);
    expect(await databaseNames()).not.toContain("by-viewer");
  });
});

describe("404: what does not exist", () => {
  it("names the missing group", async () => {
    const r = await owner.api.get(`/v1/organizations/${team}/groups/ghost`);
    expect(r).toMatchObject({ status: 404, body: { error: "group not found" } });
    const add = await owner.api.post(`/v1/organizations/${team}/groups/ghost/locations/aws-eu-west-1`);
    expect(add).toMatchObject({ status: 404, body: { error: "group not found" } });
  });

  it("names the missing database in Turso's words", async () => {
    const r = await owner.api.get(`${at(dbs)}/ghost`);
    expect(r).toMatchObject({
      status: 404,
      body: { error: "could not find database with name ghost: record not found" },
    });
    expect((await owner.api.delete(`${at(dbs)}/ghost`)).status).toBe(404);
  });

  it("answers JSON for an unknown route", async () => {
    const r = await owner.api.get("/v1/no/such/route");
    expect(r).toMatchObject({ status: 404, body: { error: "not found" } });
  });

  it("answers 404 for an organization the caller can't see", async () => {
    const r = await stranger.api.get(`/v1/organizations/${team}`);
    expect(r).toMatchObject({ status: 404, body: { error: "organization not found" } });
  });
});

describe("400: malformed or invalid input changes nothing", () => {
  const badCreates: Array<[string, unknown, RegExp]> = [
    ["malformed JSON", '{"name": "x",', /invalid JSON body/],
    ["a JSON array", "[1,2]", /invalid request body/],
    ["a missing name", { group: "default" }, /name/],
    ["a number for a name", { name: 5, group: "default" }, /name/],
    ["upper-case letters", { name: "MyDb", group: "default" }, /lowercase letters, digits and dashes/],
    ["an underscore", { name: "my_db", group: "default" }, /lowercase letters, digits and dashes/],
    ["a leading dash", { name: "-db", group: "default" }, /dash/],
    ["65 characters", { name: "a".repeat(65), group: "default" }, /at most 64/],
    ["a hostname label over 63", { name: "a".repeat(60), group: "default" }, /63/],
    ["an unknown group", { name: "orphan", group: "nope" }, /^group not found$/],
    ["a bad size limit", { name: "sized", group: "default", size_limit: "lots" }, /size_limit/],
    [
      "a location outside the group",
      { name: "placed", group: "default", location: "aws-ap-south-1" },
      /not part of group/,
    ],
  ];

  for (const [what, body, message] of badCreates) {
    it(`refuses to create a database with ${what}`, async () => {
      const before = await filesOnDisk();
      const namesBefore = await databaseNames();
      const r = await call(h.url, "POST", at(dbs), { token: owner.token, body });
      expect(r.status, r.text).toBe(400);
      expect(r.body.error).toMatch(message);
      expect(await filesOnDisk()).toEqual(before);
      expect(await databaseNames()).toEqual(namesBefore);
    });
  }

  it("refuses a non-boolean overages and leaves the flag as it was", async () => {
    for (const overages of ["true", 1, null, {}]) {
      const r = await owner.api.patch(`/v1/organizations/${team}`, { overages });
      if (overages === null) {
        expect(r.status).toBe(200);
        continue;
      }
      expect(r.status, JSON.stringify(overages)).toBe(400);
      expect(r.body.error).toMatch(/overages/);
    }
    expect((await owner.api.get(`/v1/organizations/${team}`)).body.organization.overages).toBe(false);
  });

  it("refuses an unknown location code in Turso's words", async () => {
    const r = await owner.api.post(`/v1/organizations/${team}/groups/default/locations/amss`);
    expect(r).toMatchObject({ status: 400, body: { error: "invalid location: amss" } });
    const g = await owner.api.get(`/v1/organizations/${team}/groups/default`);
    expect(g.body.group.locations).toEqual(["aws-us-east-1"]);
  });

  it("refuses a group with an unknown primary location", async () => {
    const r = await owner.api.post(`/v1/organizations/${team}/groups`, {
      name: "elsewhere",
      location: "mars-1",
    });
    expect(r).toMatchObject({ status: 400, body: { error: "invalid location: mars-1" } });
    expect((await owner.api.get(`/v1/organizations/${team}/groups/elsewhere`)).status).toBe(404);
  });

  it("refuses to remove the primary location", async () => {
    const r = await owner.api.delete(`/v1/organizations/${team}/groups/default/locations/aws-us-east-1`);
    expect(r).toMatchObject({ status: 400, body: { error: "cannot remove primary location" } });
  });

  it("refuses require_mfa rather than pretend to enforce it", async () => {
    const r = await owner.api.patch(`/v1/organizations/${team}`, { require_mfa: true });
    expect(r.status).toBe(400);
  });
});

describe("409: names that are taken", () => {
  it("refuses a second database with the same name and keeps the first intact", async () => {
    const before = await owner.api.get(`${at(dbs)}/existing`);
    const r = await owner.api.post(at(dbs), { name: "existing", group: "default" });
    expect(r).toMatchObject({ status: 409, body: { error: "database with name existing already exists" } });
    expect((await owner.api.get(`${at(dbs)}/existing`)).body).toEqual(before.body);
  });

  it("refuses a second group with the same name", async () => {
    const r = await owner.api.post(`/v1/organizations/${team}/groups`, {
      name: "default",
      location: "aws-us-east-2",
    });
    expect(r).toMatchObject({ status: 409, body: { error: "group already exists" } });
    expect((await owner.api.get(`/v1/organizations/${team}/groups/default`)).body.group.primary).toBe(
      "aws-us-east-1",
    );
  });

  it("refuses a second token with the same name", async () => {
    expect((await owner.api.post("/v1/auth/api-tokens/twice")).status).toBe(200);
    const r = await owner.api.post("/v1/auth/api-tokens/twice");
    expect(r).toMatchObject({ status: 409, body: { error: "a token named twice already exists" } });
  });
});

describe("never a 500 for bad input", () => {
  const junk = [
    "",
    "null",
    "[]",
    '"text"',
    "{",
    "{}",
    '{"name":{}}',
    '{"name":[]}',
    "\u0000",
    "x".repeat(10_000),
  ];
  const paths = [
    ["POST", () => at(dbs)],
    ["POST", () => `/v1/organizations/${team}/groups`],
    ["PATCH", () => `/v1/organizations/${team}`],
    ["POST", () => "/v1/organizations"],
    ["POST", () => `/v1/organizations/${team}/members`],
    ["POST", () => "/v1/admin/users"],
    ["POST", () => `/v1/organizations/${team}/groups/default/locations/%00`],
    ["GET", () => `${at(dbs)}/%E2%82%AC`],
  ] as const;

  it("answers every junk body on every route with a JSON 4xx or a 200", async () => {
    for (const [method, p] of paths) {
      for (const body of junk) {
        const token = p().startsWith("/v1/admin") ? h.adminToken : owner.token;
        const r = await call(h.url, method, p(), { token, body: method === "GET" ? undefined : body });
        expect(r.status, `${method} ${p()} ${JSON.stringify(body).slice(0, 30)}: ${r.text}`).toBeLessThan(
          500,
        );
        if (r.status >= 400) expect(typeof r.body?.error).toBe("string");
      }
    }
  });
});
