import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFile, mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { createClient } from "@libsql/client";
import { exportJWK, generateKeyPair } from "jose";
import Database from "libsql";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readOnlyFile } from "../../src/lib/read-only-file.js";
import { STORE_TABLES } from "../../src/store/tables.js";
import { type Client, client } from "../helpers/http.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { runShoalExpectingFailure, type ShoalProcess, spawnShoal } from "../helpers/process.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const ADMIN = "store-copy-admin-token-0123456789abcdef";
const ENV = {
  SHOAL_ADMIN_TOKEN: ADMIN,
  SHOAL_LOCATIONS: "here,there",
  SHOAL_JWKS_PRIVATE_ADDRESSES: "allow",
};
const run = promisify(execFile);

/** `shoal admin store copy` as a user runs it; answers the exit code and both streams. */
async function storeCopy(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(
      process.execPath,
      ["--import", "tsx", "src/cli/main.ts", "admin", "store", "copy", ...args],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" },
      },
    );
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

async function stop(p: ShoalProcess): Promise<void> {
  p.proc.kill("SIGTERM");
  expect(await p.exited).toBe(0);
}

const sha = async (file: string) =>
  createHash("sha256")
    .update(await readFile(file))
    .digest("hex");

function sourceCounts(dataDir: string): Record<string, number> {
  const db = new Database(readOnlyFile(path.join(dataDir, "control-plane.db")));
  try {
    return Object.fromEntries(
      STORE_TABLES.map((t) => [t, (db.prepare(`select count(*) as n from ${t}`).get() as { n: number }).n]),
    );
  } finally {
    db.close();
  }
}

let postgres: PostgresServer;
let home: string;
let dataDir: string;
let idp: Server;
let idpUrl: string;
/** What the source instance handed out, to try again once it runs on PostgreSQL. */
const made = { annToken: "", ciToken: "", dbToken: "", revokedToken: "", orgId: "", goneId: "" };

/** Fills every control-plane table through the API, as a user's instance would be. */
async function populate(url: string): Promise<void> {
  const admin = client(url, ADMIN);
  const ann = await admin.post("/v1/admin/users", { username: "ann", email: "ann@example.com" });
  expect(ann.status, ann.text).toBe(200);
  made.annToken = ann.body.token;
  const api = client(url, made.annToken);
  const org = await api.post("/v1/organizations", { name: "team" });
  expect(org.status, org.text).toBe(200);
  expect((await admin.post("/v1/admin/users", { username: "bob", email: "bob@example.com" })).status).toBe(
    200,
  );
  expect((await api.post("/v1/organizations/team/members", { username: "bob", role: "member" })).status).toBe(
    200,
  );
  expect(
    (await api.post("/v1/organizations/team/invites", { email: "cy@example.com", role: "admin" })).status,
  ).toBe(200);
  const ci = await api.post("/v1/auth/api-tokens/ci", undefined);
  expect(ci.status, ci.text).toBe(200);
  made.ciToken = ci.body.token;
  expect(
    (await api.post("/v1/organizations/team/groups", { name: "g", location: "here" })).status,
  ).toBeLessThan(300);
  expect((await api.post("/v1/organizations/team/groups/g/locations/there")).status).toBe(200);
  const created = await api.post(
    "/v1/organizations/team/databases",
    { name: "d", group: "g" },
    { headers: { "idempotency-key": "create-d" } },
  );
  expect(created.status, created.text).toBe(200);
  expect(
    (await api.patch("/v1/organizations/team/databases/d/configuration", { allow_attach: true })).status,
  ).toBe(200);
  made.dbToken = (await api.post("/v1/organizations/team/databases/d/auth/tokens")).body.jwt;
  made.revokedToken = (await api.post("/v1/organizations/team/databases/d/auth/tokens")).body.jwt;
  const revoke = await api.post("/v1/organizations/team/databases/d/auth/tokens/revoke", {
    token: made.revokedToken,
  });
  expect(revoke.status, revoke.text).toBe(200);
  const db = createClient({ url: `${url}/db/team/d/`, authToken: made.dbToken });
  await db.batch(
    ["CREATE TABLE notes (n TEXT)", "INSERT INTO notes VALUES ('kept'), ('also kept')"],
    "write",
  );
  db.close();
  const gone = await api.post("/v1/organizations/team/databases", { name: "gone", group: "g" });
  made.goneId = gone.body.database.DbId;
  expect((await api.delete("/v1/organizations/team/databases/gone")).status).toBe(200);
  expect(
    (await api.post("/v1/organizations/team/groups", { name: "old", location: "here" })).status,
  ).toBeLessThan(300);
  expect((await api.delete("/v1/organizations/team/groups/old")).status).toBe(200);
  const jwks = await api.put("/v2/organizations/team/jwks/idp", {
    jwks_url: `${idpUrl}/jwks.json`,
    region: "",
    issuer: "https://idp.test",
  });
  expect(jwks.status, jwks.text).toBe(200);
  made.orgId = (await api.get("/v1/organizations/team")).body.organization.id ?? "";
}

beforeAll(async () => {
  postgres = await startPostgres();
  home = await mkdtemp(path.join(tmpdir(), "shoal-store-copy-"));
  dataDir = path.join(home, "data");
  const { publicKey } = await generateKeyPair("ES256");
  const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256", use: "sig" };
  idp = createServer((_req, res) =>
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: [jwk] })),
  );
  await new Promise<void>((resolve) => idp.listen(0, "127.0.0.1", resolve));
  idpUrl = `http://127.0.0.1:${(idp.address() as { port: number }).port}`;
}, 120_000);

afterAll(async () => {
  idp?.close();
  await postgres?.stop();
  if (home) await rm(home, { recursive: true, force: true });
});

describe("shoal admin store copy", () => {
  let target: string;
  let sourceSha: string;

  it("refuses while a server runs on the data folder, as does a second server", async () => {
    const source = await spawnShoal({ ...ENV, SHOAL_DATA_DIR: dataDir });
    try {
      await populate(source.url);
      const second = await runShoalExpectingFailure({ ...ENV, SHOAL_DATA_DIR: dataDir });
      expect(second.code).toBe(1);
      expect(second.output).toContain(`another Shoal is running on the data folder ${dataDir}`);
      target = await postgres.newDatabase();
      const busy = await storeCopy("--to", target, "--data-dir", dataDir);
      expect(busy.code).toBe(1);
      expect(busy.stderr).toContain(`a Shoal server is running on ${dataDir}: stop it first`);
    } finally {
      await stop(source);
    }
    // A stopped instance's control-plane.db holds every commit by itself (a plain file copy is a backup).
    const alone = path.join(home, "alone");
    await mkdir(alone, { mode: 0o700 });
    await copyFile(path.join(dataDir, "control-plane.db"), path.join(alone, "control-plane.db"));
    expect(sourceCounts(alone)).toEqual(sourceCounts(dataDir));
    // Every table holds something, so the copy below is checked on all of them.
    const counts = sourceCounts(dataDir);
    expect(Object.entries(counts).filter(([, n]) => n === 0)).toEqual([]);
    sourceSha = await sha(path.join(dataDir, "control-plane.db"));
  }, 120_000);

  it("copies every table, checked, and leaves the source as it was", async () => {
    const r = await storeCopy("--to", target, "--data-dir", dataDir, "--json");
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      tables: { table: string; rows: number; checksum: string }[];
      target: string;
    };
    const counts = sourceCounts(dataDir);
    expect(out.tables.map((t) => [t.table, t.rows])).toEqual(STORE_TABLES.map((t) => [t, counts[t]]));
    for (const t of STORE_TABLES)
      expect(r.stderr).toContain(`copied ${t}: ${counts[t]} rows, checksum matches`);
    expect(await sha(path.join(dataDir, "control-plane.db"))).toBe(sourceSha);
    const c = new pg.Client({ connectionString: target });
    await c.connect();
    try {
      const orgs = await c.query(
        "select slug, database_count, group_count from organizations where slug = 'team'",
      );
      expect(orgs.rows).toEqual([{ slug: "team", database_count: 1, group_count: 1 }]);
    } finally {
      await c.end();
    }
  }, 60_000);

  it("serves the copy from PostgreSQL: old tokens, databases, settings and restores all work", async () => {
    const copy = await spawnShoal({
      SHOAL_DATA_DIR: dataDir,
      SHOAL_ADMIN_TOKEN: ADMIN,
      SHOAL_METADATA_URL: target,
    });
    try {
      const api: Client = client(copy.url, made.annToken);
      expect((await api.get("/v1/organizations")).body.map((o: { slug: string }) => o.slug).sort()).toEqual([
        "ann",
        "team",
      ]);
      expect((await client(copy.url, made.ciToken).get("/v1/organizations/team/databases")).status).toBe(200);
      const config = await api.get("/v1/organizations/team/databases/d/configuration");
      expect(config.body.allow_attach).toBe(true);
      const members = (await api.get("/v1/organizations/team/members")).body.members.map(
        (m: { username: string }) => m.username,
      );
      expect(members.sort()).toEqual(["ann", "bob"]);
      expect(
        (await api.get("/v2/organizations/team/invites")).body.invites.map((i: { email: string }) => i.email),
      ).toEqual(["cy@example.com"]);
      const db = createClient({ url: `${copy.url}/db/team/d/`, authToken: made.dbToken });
      expect((await db.execute("SELECT n FROM notes ORDER BY n")).rows.map((r) => r.n)).toEqual([
        "also kept",
        "kept",
      ]);
      db.close();
      const revoked = createClient({ url: `${copy.url}/db/team/d/`, authToken: made.revokedToken });
      await expect(revoked.execute("SELECT 1")).rejects.toThrow();
      revoked.close();
      // New rows continue the copied serial columns (an audit entry per create) and counters.
      expect((await api.post("/v1/organizations/team/databases", { name: "after", group: "g" })).status).toBe(
        200,
      );
      const replay = await api.post(
        "/v1/organizations/team/databases",
        { name: "d", group: "g" },
        { headers: { "idempotency-key": "create-d" } },
      );
      expect(replay.status).toBe(200);
      const restored = await api.post(`/v3/organizations/${made.orgId}/databases/${made.goneId}/restore`);
      expect(restored.status, restored.text).toBeLessThan(300);
      expect((await api.get("/v1/organizations/team/databases/gone")).status).toBe(200);
      expect(
        (await api.get("/v2/organizations/team/jwks")).body.jwks.map(
          (j: { jwks_name: string }) => j.jwks_name,
        ),
      ).toEqual(["idp"]);
    } finally {
      await stop(copy);
    }
  }, 120_000);

  it("refuses a target that isn't empty, and changes nothing there", async () => {
    const again = await storeCopy("--to", target, "--data-dir", dataDir);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      /already holds a Shoal control plane \(.*organizations.*\).*nothing was changed/,
    );
    const foreign = await postgres.newDatabase();
    const c = new pg.Client({ connectionString: foreign });
    await c.connect();
    await c.query("create table invoices (id int)");
    await c.end();
    const r = await storeCopy("--to", foreign, "--data-dir", dataDir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("holds tables that aren't Shoal's (invoices)");
  }, 60_000);

  it("refuses a control plane of another version, and an unreachable or malformed target", async () => {
    const other = path.join(home, "other");
    await mkdir(other, { mode: 0o700 });
    // The server's last commits may still be in the WAL: a copy made through SQLite holds them.
    const source = new Database(readOnlyFile(path.join(dataDir, "control-plane.db")));
    source.exec(`VACUUM INTO '${path.join(other, "control-plane.db").replace(/'/g, "''")}'`);
    source.close();
    const db = new Database(path.join(other, "control-plane.db"));
    db.prepare("insert into kysely_migration (name, timestamp) values ('9999-future', '2030-01-01')").run();
    db.close();
    const newer = await storeCopy("--to", await postgres.newDatabase(), "--data-dir", other);
    expect(newer.code).toBe(1);
    expect(newer.stderr).toContain("was last run by a newer Shoal (it has migration 9999-future");
    const db2 = new Database(path.join(other, "control-plane.db"));
    db2.exec("delete from kysely_migration where name in ('9999-future', '0014-deleted-databases')");
    db2.close();
    const older = await storeCopy("--to", await postgres.newDatabase(), "--data-dir", other);
    expect(older.stderr).toContain(
      "was last run by an older Shoal (it lacks migration 0014-deleted-databases)",
    );
    const missing = await storeCopy("--to", target, "--data-dir", path.join(home, "nowhere"));
    expect(missing.stderr).toContain("holds no embedded control plane");
    const down = await storeCopy("--to", "postgres://nobody@127.0.0.1:1/shoal", "--data-dir", dataDir);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain(
      "the target PostgreSQL at postgres://nobody@127.0.0.1:1/shoal can't be reached",
    );
    const bad = await storeCopy("--to", "mysql://x", "--data-dir", dataDir);
    expect(bad.stderr).toContain("--to takes a PostgreSQL URL");
  }, 60_000);
});
