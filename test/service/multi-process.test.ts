/**
 * Two `shoal` processes, each with its own port and data folder, sharing one PostgreSQL store:
 * the management API must answer the same through either. Runs in both projects; it always needs
 * PostgreSQL (two processes can't share the embedded store), so under the sqlite project it starts
 * its own server.
 */
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadOrCreateSigningKey } from "../../src/lib/signing-keys.js";
import { pipeline, sql } from "../helpers/dataplane.js";
import { type Client, client } from "../helpers/http.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { runShoalExpectingFailure, type ShoalProcess, spawnShoal } from "../helpers/process.js";
import { ADMIN_TOKEN, newPostgresDatabase, TEST_STORE } from "../helpers/shoal.js";

/** The longest a process's data plane may act on a database record changed through another one. */
const DIRECTORY_BOUND_MS = 1000;

let server: PostgresServer | undefined;
let metadataUrl: string;
const dirs: string[] = [];
let a: ShoalProcess;
let b: ShoalProcess;
let adminA: Client;
let adminB: Client;

async function dataDir(): Promise<string> {
  const d = await mkdtemp(path.join(tmpdir(), "shoal-multi-"));
  dirs.push(d);
  return d;
}

const env = (dir: string, nodeId: string) => ({
  SHOAL_DATA_DIR: dir,
  SHOAL_METADATA_URL: metadataUrl,
  SHOAL_ADMIN_TOKEN: ADMIN_TOKEN,
  SHOAL_NODE_ID: nodeId,
  SHOAL_LOG_LEVEL: "info",
});

/** Retries `check` until it passes or `boundMs` (plus scheduling slack) has gone by. */
async function within(boundMs: number, check: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + boundMs + 2000;
  for (;;) {
    try {
      await check();
      return;
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** The process holding `location` (its database files are made and served there), and the other. */
async function byLocation(location: string): Promise<{ holder: ShoalProcess; other: ShoalProcess }> {
  const nodes = (await adminA.get("/v1/admin/nodes")).body.nodes as Array<{
    id: string;
    locations: string[];
  }>;
  const holder = nodes.find((n) => n.locations.includes(location))?.id === "node-a" ? a : b;
  return { holder, other: holder === a ? b : a };
}

async function newUser(name: string): Promise<{ token: string; viaA: Client; viaB: Client }> {
  const r = await adminA.post("/v1/admin/users", { username: name, email: `${name}@example.com` });
  expect(r.status, r.text).toBe(200);
  return { token: r.body.token, viaA: client(a.url, r.body.token), viaB: client(b.url, r.body.token) };
}

beforeAll(async () => {
  if (TEST_STORE === "postgres") metadataUrl = await newPostgresDatabase();
  else {
    server = await startPostgres();
    metadataUrl = await server.newDatabase();
  }
  // Every node needs the same signing keys: make them once and give both data folders a copy.
  const [dirA, dirB] = [await dataDir(), await dataDir()];
  await loadOrCreateSigningKey(path.join(dirA, "keys"), "db-tokens");
  await loadOrCreateSigningKey(path.join(dirA, "keys"), "api-tokens");
  await cp(path.join(dirA, "keys"), path.join(dirB, "keys"), { recursive: true });
  // Both start at once on the empty store: migrations and the first administrator race.
  [a, b] = await Promise.all([spawnShoal(env(dirA, "node-a")), spawnShoal(env(dirB, "node-b"))]);
  adminA = client(a.url, ADMIN_TOKEN);
  adminB = client(b.url, ADMIN_TOKEN);
}, 120_000);

afterAll(async () => {
  for (const p of [a, b]) p?.proc.kill("SIGKILL");
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  await server?.stop();
});

describe("two processes sharing one PostgreSQL store", () => {
  it("both come up when started at once on an empty store, with one administrator", async () => {
    for (const admin of [adminA, adminB]) {
      const users = await admin.get("/v1/admin/users");
      expect(users.status, users.text).toBe(200);
      expect(users.body.users.filter((u: { admin: boolean }) => u.admin)).toHaveLength(1);
    }
  });

  it("lists both nodes as live through either, every location held by exactly one of them", async () => {
    const viaA = await adminA.get("/v1/admin/nodes");
    const viaB = await adminB.get("/v1/admin/nodes");
    // Heartbeats may land between the two reads: compare what doesn't move.
    const stable = (body: { nodes: Array<Record<string, unknown>> }) =>
      body.nodes.map((n) => ({ id: n.id, url: n.url, live: n.live, locations: n.locations }));
    expect(stable(viaA.body)).toEqual(stable(viaB.body));
    const nodes = viaA.body.nodes as Array<{ id: string; url: string; live: boolean; locations: string[] }>;
    expect(nodes.map((n) => [n.id, n.url, n.live]).sort()).toEqual([
      ["node-a", a.url, true],
      ["node-b", b.url, true],
    ]);
    const held = nodes.flatMap((n) => n.locations).sort();
    const catalogue = Object.keys((await adminA.get("/v1/locations")).body.locations).sort();
    expect(held).toEqual(catalogue);
  });

  it("refuses an API token revoked through one process on the other's next request", async () => {
    const u = await newUser("revoker");
    const minted = await u.viaA.post("/v1/auth/api-tokens/short-lived");
    const token = minted.body.token as string;
    expect((await client(b.url, token).get("/v1/organizations")).status).toBe(200);
    expect((await u.viaB.delete("/v1/auth/api-tokens/short-lived")).status).toBe(200);
    expect((await client(a.url, token).get("/v1/organizations")).status).toBe(401);
    expect((await client(b.url, token).get("/v1/organizations")).status).toBe(401);
  });

  it("lists and changes through one process a group and a database created through the other", async () => {
    const u = await newUser("crosser");
    expect((await u.viaA.post("/v1/organizations/crosser/groups", { name: "g1" })).status).toBe(200);
    const created = await u.viaA.post("/v1/organizations/crosser/databases", { name: "d1", group: "g1" });
    expect(created.status, created.text).toBe(200);
    expect(
      (await u.viaB.get("/v1/organizations/crosser/groups")).body.groups.map((g: any) => g.name),
    ).toEqual(["g1"]);
    const listed = await u.viaB.get("/v1/organizations/crosser/databases");
    expect(listed.body.databases.map((d: any) => d.DbId)).toEqual([created.body.database.DbId]);
    const patched = await u.viaB.patch("/v1/organizations/crosser/databases/d1/configuration", {
      delete_protection: true,
    });
    expect(patched.status, patched.text).toBe(200);
    const seen = await u.viaA.get("/v1/organizations/crosser/databases/d1/configuration");
    expect(seen.body.delete_protection).toBe(true);
    expect((await u.viaA.delete("/v1/organizations/crosser/databases/d1")).status).toBe(400);
    await u.viaA.patch("/v1/organizations/crosser/databases/d1/configuration", { delete_protection: false });
    expect((await u.viaB.delete("/v1/organizations/crosser/databases/d1")).status).toBe(200);
    expect((await u.viaA.get("/v1/organizations/crosser/databases/d1")).status).toBe(404);
    expect((await u.viaB.delete("/v1/organizations/crosser/groups/g1")).status).toBe(200);
    expect((await u.viaA.get("/v1/organizations/crosser/groups")).body.groups).toEqual([]);
  });

  it("gives exactly one 200 and one 409 when both processes create the same name at once", async () => {
    const u = await newUser("racer");
    expect((await u.viaA.post("/v1/organizations/racer/groups", { name: "default" })).status).toBe(200);
    for (let i = 0; i < 25; i++) {
      const body = { name: `race-${i}`, group: "default" };
      const answers = await Promise.all([
        u.viaA.post("/v1/organizations/racer/databases", body),
        u.viaB.post("/v1/organizations/racer/databases", body),
      ]);
      expect(answers.map((r) => r.status).sort(), answers.map((r) => r.text).join("\n")).toEqual([200, 409]);
    }
    for (let i = 0; i < 10; i++) {
      const body = { name: `group-${i}` };
      const answers = await Promise.all([
        u.viaA.post("/v1/organizations/racer/groups", body),
        u.viaB.post("/v1/organizations/racer/groups", body),
      ]);
      expect(answers.map((r) => r.status).sort(), answers.map((r) => r.text).join("\n")).toEqual([200, 409]);
    }
    const listed = await u.viaB.get("/v1/organizations/racer/databases");
    expect(listed.body.databases).toHaveLength(25);
  });

  it("sees a membership added, changed and removed through the other process", async () => {
    const owner = await newUser("team-owner");
    const member = await newUser("team-member");
    const team = await owner.viaA.post("/v1/organizations", { name: "shared-team" });
    expect(team.status, team.text).toBe(200);
    const slug = team.body.organization.slug as string;
    await owner.viaA.post(`/v1/organizations/${slug}/groups`, { name: "default" });
    expect(
      (
        await owner.viaA.post(`/v1/organizations/${slug}/members`, {
          username: "team-member",
          role: "member",
        })
      ).status,
    ).toBe(200);
    // Memberships are read from the store on every request: the bound is zero.
    expect(
      (await member.viaB.post(`/v1/organizations/${slug}/databases`, { name: "by-member" })).status,
    ).toBe(200);
    expect(
      (await owner.viaB.patch(`/v1/organizations/${slug}/members/team-member`, { role: "viewer" })).status,
    ).toBe(200);
    expect(
      (await member.viaA.post(`/v1/organizations/${slug}/databases`, { name: "by-viewer" })).status,
    ).toBe(403);
    expect((await owner.viaA.delete(`/v1/organizations/${slug}/members/team-member`)).status).toBe(200);
    expect((await member.viaB.get(`/v1/organizations/${slug}/databases`)).status).toBe(403);
  });

  it("applies a plan's quota and an overages change made through the other process", async () => {
    const u = await newUser("planned");
    await u.viaA.post("/v1/organizations/planned/groups", { name: "default" });
    // The plan is made through one process and given to the organization through the other.
    const plan = await adminA.post("/v1/admin/plans", {
      name: "one-db",
      price: "0",
      quotas: { databases: 1 },
    });
    expect(plan.status, plan.text).toBe(200);
    const chosen = await adminB.post("/v1/admin/organizations/planned/plan", { plan: "one-db" });
    expect(chosen.status, chosen.text).toBe(200);
    expect((await u.viaA.post("/v1/organizations/planned/databases", { name: "first" })).status).toBe(200);
    expect((await u.viaB.post("/v1/organizations/planned/databases", { name: "second" })).status).toBe(402);
    expect((await u.viaA.patch("/v1/organizations/planned", { overages: true })).status).toBe(200);
    expect((await u.viaB.post("/v1/organizations/planned/databases", { name: "second" })).status).toBe(200);
  });

  it("serves a database token minted through one process at the node holding the database, until rotated through the other", async () => {
    const { holder, other } = await byLocation("aws-us-east-1");
    const u = await newUser("dataplane");
    const viaHolder = client(holder.url, u.token);
    const viaOther = client(other.url, u.token);
    await viaHolder.post("/v1/organizations/dataplane/groups", {
      name: "default",
      location: "aws-us-east-1",
    });
    // The create goes to the node without the files; it is served by the holder, which makes them.
    const created = await viaOther.post("/v1/organizations/dataplane/databases", { name: "kv" });
    expect(created.status, created.text).toBe(200);
    expect(created.headers.get("x-shoal-served-by")).toBe(holder === a ? "node-a" : "node-b");
    const minted = await viaOther.post("/v1/organizations/dataplane/databases/kv/auth/tokens");
    const jwt = minted.body.jwt as string;
    const base = `${holder.url}/db/dataplane/kv/`;
    const ok = await pipeline(base, jwt, { requests: [sql("select 1")] });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    // The other node has no file for it: it sends the request on to the holder.
    const elsewhere = await pipeline(`${other.url}/db/dataplane/kv/`, jwt, { requests: [sql("select 1")] });
    expect(elsewhere.status, JSON.stringify(elsewhere.body)).toBe(200);
    expect((await viaOther.post("/v1/organizations/dataplane/databases/kv/auth/rotate")).status).toBe(200);
    await within(DIRECTORY_BOUND_MS, async () => {
      expect((await pipeline(base, jwt, { requests: [sql("select 1")] })).status).toBe(401);
    });
  });

  it("refuses a database token revoked one by one through the other process within the bound", async () => {
    const { holder, other } = await byLocation("aws-us-east-1");
    const u = await newUser("one-by-one");
    const [viaHolder, viaOther] = [client(holder.url, u.token), client(other.url, u.token)];
    await viaHolder.post("/v1/organizations/one-by-one/groups", {
      name: "default",
      location: "aws-us-east-1",
    });
    expect((await viaHolder.post("/v1/organizations/one-by-one/databases", { name: "kv" })).status).toBe(200);
    const mint = async () =>
      (await viaHolder.post("/v1/organizations/one-by-one/databases/kv/auth/tokens")).body.jwt;
    const [doomed, kept] = [await mint(), await mint()];
    const base = `${holder.url}/db/one-by-one/kv/`;
    expect((await pipeline(base, doomed, { requests: [sql("select 1")] })).status).toBe(200);
    const revoked = await viaOther.post("/v1/organizations/one-by-one/databases/kv/auth/tokens/revoke", {
      token: doomed,
    });
    expect(revoked.status, revoked.text).toBe(200);
    await within(DIRECTORY_BOUND_MS, async () => {
      expect((await pipeline(base, doomed, { requests: [sql("select 1")] })).status).toBe(401);
    });
    expect((await pipeline(base, kept, { requests: [sql("select 1")] })).status).toBe(200);
  });

  it("replays a forwarded create sent again with its Idempotency-Key through either process", async () => {
    const { holder, other } = await byLocation("aws-us-east-1");
    const u = await newUser("retrier");
    const [viaHolder, viaOther] = [client(holder.url, u.token), client(other.url, u.token)];
    await viaHolder.post("/v1/organizations/retrier/groups", { name: "default", location: "aws-us-east-1" });
    const key = { headers: { "idempotency-key": "create-once-1" } };
    const first = await viaOther.post("/v1/organizations/retrier/databases", { name: "once" }, key);
    expect(first.status, first.text).toBe(200);
    for (const via of [viaHolder, viaOther]) {
      const again = await via.post("/v1/organizations/retrier/databases", { name: "once" }, key);
      expect(again.status, again.text).toBe(200);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.body).toEqual(first.body);
    }
    expect((await viaOther.get("/v1/organizations/retrier/databases")).body.databases).toHaveLength(1);
  });

  it("shows a process that stopped as not live to the other", async () => {
    b.proc.kill("SIGTERM");
    expect(await b.exited).toBe(0);
    const nodes = (await adminA.get("/v1/admin/nodes")).body.nodes as Array<{ id: string; live: boolean }>;
    expect(nodes.find((n) => n.id === "node-b")?.live).toBe(false);
    expect(nodes.find((n) => n.id === "node-a")?.live).toBe(true);
  });

  it("refuses to start a process whose database-token key differs from the other nodes'", async () => {
    const { code, output } = await runShoalExpectingFailure(env(await dataDir(), "node-c"));
    expect(code).toBe(2);
    expect(output).toContain("db-tokens signing key");
    expect(output).toContain("Copy the keys/ folder of a running node");
    expect(output).not.toContain("    at ");
  });

  it("refuses to start a second process with the node id of a live node", async () => {
    const dir = await dataDir();
    await cp(path.join(dirs[0]!, "keys"), path.join(dir, "keys"), { recursive: true });
    const { code, output } = await runShoalExpectingFailure(env(dir, "node-a"));
    expect(code).toBe(2);
    expect(output).toContain("node id node-a is in use by a live node");
  });
});
