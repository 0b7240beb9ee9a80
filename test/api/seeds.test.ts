import { readdirSync } from "node:fs";
import path from "node:path";
import { createClient, type Client as SqlClient } from "@libsql/client";
import { createClient as createApiClient } from "@tursodatabase/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintToken } from "../helpers/dataplane.js";
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
let u: TestUser;
let org: string;
const opened: SqlClient[] = [];
const dbs = () => `/v1/organizations/${org}/databases`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  h = await startTestShoal();
  u = await createUser(h);
  org = u.username;
  await createGroup(u, org, "default", "aws-us-east-1");
  await u.api.post(`/v1/organizations/${org}/groups/default/locations/aws-eu-west-1`);
  await createGroup(u, org, "other", "aws-us-west-2");
});
afterAll(async () => {
  for (const c of opened) c.close();
  await h.close();
});

/** A SQL client for one database, over HTTP through the data plane. */
async function sql(name: string, owner = u, slug = org): Promise<SqlClient> {
  const c = createClient({
    url: `${h.url}/db/${slug}/${name}/`,
    authToken: await mintToken(owner, slug, name),
  });
  opened.push(c);
  return c;
}

async function values(c: SqlClient): Promise<string[]> {
  return (await c.execute("SELECT v FROM t ORDER BY id")).rows.map((r) => String(r.v));
}

/** A database with a table `t(id, v)` holding these values. */
async function source(name: string, rows: string[], group = "default"): Promise<SqlClient> {
  await createDatabase(u, org, name, group);
  const c = await sql(name);
  await c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  for (const v of rows) await c.execute({ sql: "INSERT INTO t (v) VALUES (?)", args: [v] });
  return c;
}

/** Database files of every location, to see that a refused create leaves none. */
function instanceFiles(): string[] {
  const root = path.join(h.dataDir, "locations");
  return readdirSync(root)
    .flatMap((l) => readdirSync(path.join(root, l)).map((f) => `${l}/${f}`))
    .filter((f) => /\.db(\.log)?$/.test(f))
    .sort();
}

describe("seed type database: branches", () => {
  it("copies the source's rows into a new database, and the two go their own ways", async () => {
    const src = await source("trunk", ["a", "b"]);
    const r = await u.api.post(dbs(), {
      name: "branch",
      group: "default",
      seed: { type: "database", name: "trunk" },
    });
    expect(r.status, r.text).toBe(200);
    const branch = await sql("branch");
    expect(await values(branch)).toEqual(["a", "b"]);
    await src.execute("INSERT INTO t (v) VALUES ('only-trunk')");
    await branch.execute("INSERT INTO t (v) VALUES ('only-branch')");
    expect(await values(src)).toEqual(["a", "b", "only-trunk"]);
    expect(await values(branch)).toEqual(["a", "b", "only-branch"]);
  });

  it("records the parent and lists branches by the parent's name or id", async () => {
    const trunk = (await u.api.get(`${dbs()}/trunk`)).body.database;
    const got = (await u.api.get(`${dbs()}/branch`)).body.database;
    expect(got.parent).toEqual({ id: trunk.DbId, name: "trunk", branched_at: expect.any(String) });
    expect(Date.parse(got.parent.branched_at)).toBeGreaterThan(0);
    for (const parent of ["trunk", trunk.DbId]) {
      const listed = await u.api.get(`${dbs()}?parent=${parent}`);
      expect(listed.body.databases.map((d: { Name: string }) => d.Name)).toEqual(["branch"]);
    }
    expect((await u.api.get(`${dbs()}?parent=branch`)).body.databases).toEqual([]);
    expect(trunk.parent).toBeNull();
  });

  it("accepts the source under seed.value, as the turso CLI sends it, and into another group", async () => {
    const r = await u.api.post(dbs(), {
      name: "by-value",
      group: "other",
      seed: { type: "database", value: "trunk" },
    });
    expect(r.status, r.text).toBe(200);
    expect(await values(await sql("by-value"))).toEqual(["a", "b", "only-trunk"]);
  });

  it("copies only committed rows while a write transaction is open on the source", async () => {
    const src = await source("busy", ["committed"]);
    const tx = await src.transaction("write");
    await tx.execute("INSERT INTO t (v) VALUES ('in-flight')");
    const r = await u.api.post(dbs(), {
      name: "busy-copy",
      group: "default",
      seed: { type: "database", name: "busy" },
    });
    expect(r.status, r.text).toBe(200);
    await tx.commit();
    expect(await values(await sql("busy-copy"))).toEqual(["committed"]);
    expect(await values(src)).toEqual(["committed", "in-flight"]);
  });

  it("serves the branch's rows at its replica locations too", async () => {
    const token = await mintToken(u, org, "branch");
    const at = createClient({ url: `${h.url}/db/${org}/branch@aws-eu-west-1/`, authToken: token });
    opened.push(at);
    expect(await values(at)).toEqual(["a", "b", "only-branch"]);
  });
});

describe("seeds through the official TS client (@tursodatabase/api)", () => {
  it("creates a branch and a point-in-time restore, with the timestamp given as a Date", async () => {
    const turso = createApiClient({ org, token: u.token, baseUrl: h.apiBase });
    const src = await source("ts-source", ["one"]);
    await sleep(20);
    const moment = new Date();
    await sleep(20);
    await src.execute("INSERT INTO t (v) VALUES ('two')");
    const branch = await turso.databases.create("ts-branch", {
      group: "default",
      seed: { type: "database", name: "ts-source" },
    });
    expect(branch.name).toBe("ts-branch");
    const restore = await turso.databases.create("ts-restore", {
      group: "default",
      seed: { type: "database", name: "ts-source", timestamp: moment },
    });
    expect(restore.name).toBe("ts-restore");
    expect(await values(await sql("ts-branch"))).toEqual(["one", "two"]);
    expect(await values(await sql("ts-restore"))).toEqual(["one"]);
  });
});

describe("seed type database with a timestamp: point-in-time restores", () => {
  it("restores exactly the rows committed at or before the moment", async () => {
    const src = await source("timeline", ["early-1", "early-2"]);
    await sleep(20);
    const moment = new Date().toISOString();
    await sleep(20);
    await src.execute("INSERT INTO t (v) VALUES ('late')");
    await src.execute("DELETE FROM t WHERE v = 'early-1'");
    const r = await u.api.post(dbs(), {
      name: "restored",
      group: "default",
      seed: { type: "database", name: "timeline", timestamp: moment },
    });
    expect(r.status, r.text).toBe(200);
    expect(await values(await sql("restored"))).toEqual(["early-1", "early-2"]);
    expect(await values(src)).toEqual(["early-2", "late"]);
    const got = (await u.api.get(`${dbs()}/restored`)).body.database;
    expect(got.parent.name).toBe("timeline");
    expect(got.parent.branched_at).toBe(moment);
  });

  it("refuses a moment older than the history, saying how far back it goes, and creates nothing", async () => {
    await source("young", ["x"]);
    const before = instanceFiles();
    const r = await u.api.post(dbs(), {
      name: "too-old",
      group: "default",
      seed: { type: "database", name: "young", timestamp: "2001-01-01T00:00:00Z" },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(
      /older than the history of database young: it goes back to \d{4}-\d\d-\d\dT/,
    );
    expect((await u.api.get(`${dbs()}/too-old`)).status).toBe(404);
    expect(instanceFiles()).toEqual(before);
  });

  it("refuses a moment in the future and a malformed one", async () => {
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const r = await u.api.post(dbs(), {
      name: "future",
      group: "default",
      seed: { type: "database", name: "young", timestamp: future },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/is in the future/);
    const bad = await u.api.post(dbs(), {
      name: "future",
      group: "default",
      seed: { type: "database", name: "young", timestamp: "yesterday" },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/ISO-8601/);
  });
});

describe("seeds that can't be used", () => {
  it("names the allowed types for an unknown or missing seed type", async () => {
    for (const seed of [{ type: "backup", name: "trunk" }, { name: "trunk" }]) {
      const r = await u.api.post(dbs(), { name: "nope", group: "default", seed });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatch(/database, database_upload, dump/);
    }
    const noSource = await u.api.post(dbs(), { name: "nope", group: "default", seed: { type: "database" } });
    expect(noSource.status).toBe(400);
    expect(noSource.body.error).toMatch(/seed.name \(or seed.value\)/);
  });

  it("answers not found for a source in another organization, or none at all", async () => {
    const other = await createUser(h);
    await createGroup(other, other.username, "default");
    await createDatabase(other, other.username, "secret");
    for (const name of ["secret", "missing"]) {
      const r = await u.api.post(dbs(), {
        name: "stolen",
        group: "default",
        seed: { type: "database", name },
      });
      expect(r.status).toBe(404);
      expect(r.body.error).toBe(`could not find database with name ${name}: record not found`);
    }
  });

  it("answers not found for a source outside a group-scoped token's group", async () => {
    const minted = await u.api.post(`/v1/auth/api-tokens/${uniqueName("scoped")}`, {
      organization: org,
      group: "other",
      scopes: ["full-access"],
    });
    const scoped = client(h.url, minted.body.token);
    const r = await scoped.post(dbs(), {
      name: "reach",
      group: "other",
      seed: { type: "database", name: "trunk" },
    });
    expect(r.status).toBe(404);
    const own = await scoped.post(dbs(), {
      name: "reach",
      group: "other",
      seed: { type: "database", name: "by-value" },
    });
    expect(own.status, own.text).toBe(200);
  });

  it("refuses a copy larger than the new database's size limit, leaving nothing", async () => {
    const big = await source("bulky", []);
    await big.execute("INSERT INTO t (v) VALUES (zeroblob(300000))");
    const before = instanceFiles();
    const r = await u.api.post(dbs(), {
      name: "small-copy",
      group: "default",
      size_limit: "64kb",
      seed: { type: "database", name: "bulky" },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/more than its size_limit/);
    expect(instanceFiles()).toEqual(before);
    expect((await u.api.get(`${dbs()}/small-copy`)).status).toBe(404);
  });

  it("enforces size_limit on a new database's writes", async () => {
    const r = await u.api.post(dbs(), { name: "capped", group: "default", size_limit: "64kb" });
    expect(r.status, r.text).toBe(200);
    const c = await sql("capped");
    await c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)");
    await expect(c.execute("INSERT INTO t (v) VALUES (zeroblob(200000))")).rejects.toMatchObject({
      code: "SQLITE_FULL",
    });
  });

  it("refuses to copy a database that waits for its upload", async () => {
    const w = await u.api.post(dbs(), {
      name: "waiting",
      group: "default",
      seed: { type: "database_upload" },
    });
    expect(w.status, w.text).toBe(200);
    const r = await u.api.post(dbs(), {
      name: "of-waiting",
      group: "default",
      seed: { type: "database", name: "waiting" },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/waiting for an upload/);
  });

  it("refuses a member without db:create, and a viewer, before copying anything", async () => {
    const team = await createTeam(u);
    const viewer = await createUser(h);
    await addMember(u, team, viewer.username, "viewer");
    await createGroup(u, team, "default");
    await createDatabase(u, team, "src");
    const r = await viewer.api.post(`/v1/organizations/${team}/databases`, {
      name: "copy",
      group: "default",
      seed: { type: "database", name: "src" },
    });
    expect(r.status).toBe(403);
  });
});

describe("branches and the database quota", () => {
  it("counts branches and restores against the plan's database quota", async () => {
    const admin = client(h.url, h.adminToken);
    const plan = uniqueName("plan");
    expect((await admin.post("/v1/admin/plans", { name: plan, quotas: { databases: 2 } })).status).toBe(200);
    const team = await createTeam(u);
    expect((await admin.post(`/v1/admin/organizations/${team}/plan`, { plan })).status).toBe(200);
    await createGroup(u, team, "default");
    await createDatabase(u, team, "one");
    const second = await u.api.post(`/v1/organizations/${team}/databases`, {
      name: "two",
      group: "default",
      seed: { type: "database", name: "one" },
    });
    expect(second.status, second.text).toBe(200);
    const third = await u.api.post(`/v1/organizations/${team}/databases`, {
      name: "three",
      group: "default",
      seed: { type: "database", name: "one", timestamp: new Date().toISOString() },
    });
    expect(third.status).toBe(402);
    expect((await u.api.get(`/v1/organizations/${team}/databases`)).body.databases).toHaveLength(2);
  });
});
