import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient } from "@libsql/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Client, client } from "../helpers/http.js";
import { killAndRemove, type ShoalProcess, spawnShoal } from "../helpers/process.js";
import { newPostgresDatabase, TEST_STORE } from "../helpers/shoal.js";

const LOCS = ["aws-us-east-1", "aws-eu-west-1"];
let dataDir: string;
let metadata: Record<string, string>;
let running: ShoalProcess | undefined;

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "shoal-restart-"));
  metadata = TEST_STORE === "postgres" ? { SHOAL_METADATA_URL: await newPostgresDatabase() } : {};
});
afterEach(async () => {
  await killAndRemove(running, dataDir);
  running = undefined;
});

const start = () => spawnShoal({ SHOAL_DATA_DIR: dataDir, SHOAL_LOG_LEVEL: "info", ...metadata });

/** Writes a row at every location (each through that location's address), then reads it back there. */
async function writeAndReadEverywhere(url: string, token: string, round: number): Promise<void> {
  for (const loc of LOCS) {
    const db = createClient({ url: `${url}/db/admin/d@${loc}/`, authToken: token });
    try {
      const v = `${loc}#${round}`;
      const w = await db.execute({ sql: "INSERT INTO t (v) VALUES (?)", args: [v] });
      expect(w.rowsAffected).toBe(1);
      // Read-your-writes at the location that took the write.
      const r = await db.execute({ sql: "SELECT count(*) AS n FROM t WHERE v = ?", args: [v] });
      expect(r.rows[0]?.n).toBe(1);
    } finally {
      db.close();
    }
  }
}

/** After `/wait`, a fresh client at each location (no write of its own to wait for) sees every row. */
async function everyLocationHas(url: string, api: Client, token: string, rows: number): Promise<void> {
  for (const loc of LOCS.slice(1)) {
    const wait = await api.get(`/v1/organizations/admin/groups/g/locations/${loc}/wait?timeout=10`);
    expect(wait.status, wait.text).toBe(200);
  }
  for (const loc of LOCS) {
    const db = createClient({ url: `${url}/db/admin/d@${loc}/`, authToken: token });
    try {
      expect((await db.execute("SELECT count(*) AS n FROM t")).rows[0]?.n).toBe(rows);
    } finally {
      db.close();
    }
  }
  const group = await api.get("/v1/organizations/admin/groups/g");
  expect(group.body.group.status.locations).toEqual(LOCS.map((name) => ({ name, status: "up" })));
}

describe("replica locations across a restart of the process", () => {
  for (const signal of ["SIGTERM", "SIGKILL"] as const) {
    it(`serve reads and writes at every location after ${signal}`, async () => {
      running = await start();
      const admin = (await readFile(path.join(dataDir, "admin-token"), "utf8")).trim();
      const api = client(running.url, admin);
      expect(
        (await api.post("/v1/organizations/admin/groups", { name: "g", location: LOCS[0] })).status,
      ).toBe(200);
      expect((await api.post("/v1/organizations/admin/databases", { name: "d", group: "g" })).status).toBe(
        200,
      );
      expect((await api.post(`/v1/organizations/admin/groups/g/locations/${LOCS[1]}`)).status).toBe(200);
      const token = (await api.post("/v1/organizations/admin/databases/d/auth/tokens")).body.jwt as string;
      const primary = createClient({ url: `${running.url}/db/admin/d/`, authToken: token });
      await primary.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
      primary.close();
      await writeAndReadEverywhere(running.url, token, 1);
      await everyLocationHas(running.url, api, token, 2);

      running.proc.kill(signal);
      expect(await running.exited).toBe(signal === "SIGTERM" ? 0 : "SIGKILL");
      running = await start();
      const again = client(running.url, admin);

      // Before any new write: the replica serves what it had, and reports up.
      await everyLocationHas(running.url, again, token, 2);
      await writeAndReadEverywhere(running.url, token, 2);
      await everyLocationHas(running.url, again, token, 4);
      expect(running.output()).not.toContain("no replica");
      // Two starts of the process from source (tsx), with PostgreSQL's migrations: slow on a busy machine.
    }, 60_000);
  }
});
