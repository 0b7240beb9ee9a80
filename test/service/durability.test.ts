import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient } from "@libsql/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { client } from "../helpers/http.js";
import { killAndRemove, type ShoalProcess, spawnShoal } from "../helpers/process.js";

const TOKEN = "durability-admin-token-0123456789";
let dataDir: string;
let running: ShoalProcess | undefined;

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "shoal-crash-"));
});
afterEach(async () => {
  await killAndRemove(running, dataDir);
  running = undefined;
});

const env = () => ({ SHOAL_DATA_DIR: dataDir, SHOAL_ADMIN_TOKEN: TOKEN, SHOAL_LOG_LEVEL: "info" });

async function database(url: string): Promise<{ dbUrl: string; jwt: string }> {
  const api = client(url, TOKEN);
  expect(
    (await api.post("/v1/organizations/admin/groups", { name: "default", location: "aws-us-east-1" })).status,
  ).toBe(200);
  expect(
    (await api.post("/v1/organizations/admin/databases", { name: "ledger", group: "default" })).status,
  ).toBe(200);
  const jwt = (await api.post("/v1/organizations/admin/databases/ledger/auth/tokens")).body.jwt as string;
  return { dbUrl: `${url}/db/admin/ledger/`, jwt };
}

describe("durability", () => {
  it("keeps every acknowledged write through a kill -9, and no uncommitted one", async () => {
    running = await spawnShoal(env());
    const { dbUrl, jwt } = await database(running.url);
    const c = createClient({ url: dbUrl, authToken: jwt });
    await c.execute("CREATE TABLE entries (id INTEGER PRIMARY KEY, note TEXT)");
    const acknowledged = 300;
    for (let i = 1; i <= acknowledged; i++) {
      await c.execute({ sql: "INSERT INTO entries (id, note) VALUES (?, ?)", args: [i, `entry ${i}`] });
    }
    const open = await c.transaction("write");
    await open.execute("INSERT INTO entries (id, note) VALUES (100000, 'never committed')");
    running.proc.kill("SIGKILL");
    expect(await running.exited).toBe("SIGKILL");
    c.close();

    running = await spawnShoal(env());
    const after = createClient({ url: `${running.url}/db/admin/ledger/`, authToken: jwt });
    const rs = await after.execute("SELECT count(*) AS n, max(id) AS last FROM entries WHERE id <= ?", [
      acknowledged,
    ]);
    expect(rs.rows[0]).toMatchObject({ n: acknowledged, last: acknowledged });
    const lost = await after.execute("SELECT count(*) AS n FROM entries WHERE id = 100000");
    expect(lost.rows[0]!.n).toBe(0);
    after.close();
  });

  it("on SIGTERM, finishes a request in flight before exiting", async () => {
    running = await spawnShoal(env());
    const { dbUrl, jwt } = await database(running.url);
    const holder = createClient({ url: dbUrl, authToken: jwt });
    await holder.execute("CREATE TABLE t (v TEXT)");
    const tx = await holder.transaction("write");
    await tx.execute("INSERT INTO t VALUES ('held')");
    // This write waits for the holder's lock: it is in flight when the signal arrives.
    const waiter = createClient({ url: dbUrl, authToken: jwt });
    const inflight = waiter.execute("INSERT INTO t VALUES ('in flight')");
    await new Promise((r) => setTimeout(r, 200));
    running.proc.kill("SIGTERM");
    const r = await inflight;
    expect(r.rowsAffected).toBe(1);
    expect(await running.exited).toBe(0);

    running = await spawnShoal(env());
    const check = createClient({ url: `${running.url}/db/admin/ledger/`, authToken: jwt });
    const rows = await check.execute("SELECT v FROM t ORDER BY rowid");
    expect(rows.rows.map((x) => x.v)).toEqual(["in flight"]);
    check.close();
  });
});
