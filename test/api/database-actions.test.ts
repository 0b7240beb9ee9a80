import { createClient } from "@libsql/client";
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
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";
import { setDatabaseColumns } from "../helpers/store-columns.js";

let h: TestShoal;
let u: TestUser;
let viewer: TestUser;
let org: string;
const dbp = (d: string) => `/v1/organizations/${org}/databases/${d}`;

beforeAll(async () => {
  h = await startTestShoal();
  u = await createUser(h);
  viewer = await createUser(h);
  org = await createTeam(u);
  await addMember(u, org, viewer.username, "viewer");
  await createGroup(u, org, "default");
});
afterAll(() => h.close());

async function auditOf(code: string) {
  const r = await u.api.get(`/v1/organizations/${org}/audit-logs`);
  return (r.body.audit_logs as Array<{ code: string; data: any }>).filter((e) => e.code === code);
}

async function run(name: string, statements: string[]) {
  const c = createClient({ url: `${h.url}/db/${org}/${name}/`, authToken: await mintToken(u, org, name) });
  try {
    for (const s of statements) await c.execute(s);
  } finally {
    c.close();
  }
}

describe("the Database object", () => {
  it("carries every field of Turso's superset", async () => {
    const d = await createDatabase(u, org, "shape");
    const r = await u.api.get(dbp("shape"));
    expect(r.body.database).toEqual({
      Name: "shape",
      DbId: d.DbId,
      Hostname: `shape-${org}.shoal.test`,
      http_url: `${h.url}/db/${org}/shape/`,
      regions: ["aws-us-east-1"],
      primaryRegion: "aws-us-east-1",
      group: "default",
      type: "logical",
      database_type: "libsql",
      version: "0.0.0-test",
      block_reads: false,
      block_writes: false,
      allow_attach: false,
      delete_protection: false,
      is_schema: false,
      schema: "",
      archived: false,
      sleeping: false,
      parent: null,
    });
  });

  it("names a branch's parent and a follower's schema database, hiding names of other organizations", async () => {
    const parent = await createDatabase(u, org, "origin");
    const schema = await createDatabase(u, org, "blueprint");
    const child = await createDatabase(u, org, "offshoot");
    // Branches and schema databases are made by their own routes; here the columns are set directly.
    await setDatabaseColumns(h, child.DbId, {
      parent_id: parent.DbId,
      branched_at: "2026-01-02T03:04:05.000Z",
      schema_id: schema.DbId,
    });
    await setDatabaseColumns(h, schema.DbId, { is_schema: 1 });
    const r = (await u.api.get(dbp("offshoot"))).body.database;
    expect(r.parent).toEqual({ id: parent.DbId, name: "origin", branched_at: "2026-01-02T03:04:05.000Z" });
    expect(r.schema).toBe("blueprint");
    expect((await u.api.get(dbp("blueprint"))).body.database.is_schema).toBe(true);

    // A parent outside the organization keeps its id but not its name.
    const stranger = await createUser(h);
    await createGroup(stranger, stranger.username, "default");
    const foreign = await createDatabase(stranger, stranger.username, uniqueName("theirs"));
    await setDatabaseColumns(h, child.DbId, { parent_id: foreign.DbId });
    expect((await u.api.get(dbp("offshoot"))).body.database.parent).toMatchObject({
      id: foreign.DbId,
      name: null,
    });
  });
});

describe("updating and waking up a database", () => {
  it("answers {} to an update and records it", async () => {
    await createDatabase(u, org, "upgradable");
    const r = await u.api.post(`${dbp("upgradable")}/update`);
    expect(r).toMatchObject({ status: 200, body: {} });
    expect((await auditOf("db-update"))[0]?.data).toEqual({ database: "upgradable", version: "0.0.0-test" });
    expect((await u.api.post(`${dbp("none-such")}/update`)).status).toBe(404);
  });

  it("wakes an archived database by unarchiving its group, and records it under Turso's code", async () => {
    const group = await createGroup(u, org, "dozing");
    await createDatabase(u, org, "dozer", "dozing");
    await createDatabase(u, org, "dozer-2", "dozing");
    await h.shoal.deps.store.write((r) => r.groups.update(group.uuid, { archived: 1 }));
    expect((await u.api.get(dbp("dozer"))).body.database).toMatchObject({ archived: true, sleeping: true });

    const r = await u.api.post(`${dbp("dozer")}/wakeup`);
    expect(r).toMatchObject({ status: 200, body: {} });
    expect((await u.api.get(dbp("dozer-2"))).body.database.sleeping).toBe(false);
    expect((await u.api.get(`/v1/organizations/${org}/groups/dozing`)).body.group.archived).toBe(false);
    expect((await auditOf("db-aunrchive"))[0]?.data).toEqual({
      database: "dozer",
      group: "dozing",
      archived: true,
    });
  });

  it("refuses a viewer (403) and an unknown database (404)", async () => {
    await createDatabase(u, org, "viewed");
    expect((await viewer.api.post(`${dbp("viewed")}/wakeup`)).status).toBe(403);
    expect((await viewer.api.post(`${dbp("viewed")}/update`)).status).toBe(403);
    expect((await u.api.post(`${dbp("none-such")}/wakeup`)).status).toBe(404);
  });
});

describe("usage and query statistics", () => {
  it("lists the most expensive statements as a bare array for `db inspect --queries`", async () => {
    await createDatabase(u, org, "busy");
    await run("busy", ["CREATE TABLE t (v)", "INSERT INTO t VALUES (1), (2), (3)", "SELECT * FROM t"]);
    const from = new Date(Date.now() - 86_400_000).toISOString().replace(/\.\d+Z$/, "Z");
    const r = await u.api.get(`${dbp("busy")}/usage/queries?from=${from}`);
    expect(r.status, r.text).toBe(200);
    expect(Array.isArray(r.body)).toBe(true);
    expect(r.body).toContainEqual({
      query: "INSERT INTO t VALUES (1), (2), (3)",
      rows_read: 0,
      rows_written: 3,
    });
    expect(r.body).toContainEqual({ query: "SELECT * FROM t", rows_read: 3, rows_written: 0 });
    for (const q of r.body) expect(Object.keys(q).sort()).toEqual(["query", "rows_read", "rows_written"]);
    const viewed = await viewer.api.get(`${dbp("busy")}/usage/queries`);
    expect(viewed.status).toBe(200);
  });

  it("refuses a from that isn't RFC 3339 with Turso's message", async () => {
    await createDatabase(u, org, "dated");
    const r = await u.api.get(`${dbp("dated")}/usage/queries?from=yesterday`);
    expect(r).toMatchObject({
      status: 400,
      body: {
        error:
          'invalid from parameter: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"',
      },
    });
  });

  it("answers usage under both usage and total, for a from/to period, with Go's parse errors", async () => {
    const d = await createDatabase(u, org, "metered");
    await run("metered", ["CREATE TABLE t (v)", "INSERT INTO t VALUES (1), (2)"]);
    const r = await u.api.get(`${dbp("metered")}/usage`);
    expect(r.status, r.text).toBe(200);
    expect(r.body.database.uuid).toBe(d.DbId);
    expect(r.body.database.usage).toEqual(r.body.database.total);
    expect(r.body.database.usage.rows_written).toBe(2);
    const past = await u.api.get(`${dbp("metered")}/usage?from=2001-01-01T00:00:00Z&to=2001-01-31T00:00:00Z`);
    expect(past.body.database.total.rows_written).toBe(0);

    const cases: Array<[string, string]> = [
      [
        "from=2026-13-01T00:00:00Z",
        'invalid from parameter: parsing time "2026-13-01T00:00:00Z": month out of range',
      ],
      [
        "to=2026-01-01",
        'invalid to parameter: parsing time "2026-01-01" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "T"',
      ],
      [
        "from=2026-02-30T00:00:00Z",
        'invalid from parameter: parsing time "2026-02-30T00:00:00Z": day out of range',
      ],
    ];
    for (const [query, error] of cases) {
      expect(await u.api.get(`${dbp("metered")}/usage?${query}`)).toMatchObject({
        status: 400,
        body: { error },
      });
    }
  });

  it("answers the top queries under top_queries", async () => {
    await createDatabase(u, org, "ranked");
    await run("ranked", ["CREATE TABLE t (v)", "INSERT INTO t VALUES (1)"]);
    const r = await u.api.get(`${dbp("ranked")}/stats`);
    expect(r.status).toBe(200);
    expect(r.body.top_queries).toContainEqual(
      expect.objectContaining({ query: "INSERT INTO t VALUES (1)", rows_written: 1 }),
    );
  });
});
