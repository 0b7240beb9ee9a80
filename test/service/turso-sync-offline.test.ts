/**
 * An offline-first app's day with @tursodatabase/sync against a real `shoal` process: it works
 * while the server is down, and its writes reach the server once the server is back on the same
 * port and data folder.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient } from "@libsql/client";
import { connect } from "@tursodatabase/sync";
import { afterEach, beforeEach, expect, it } from "vitest";
import { client } from "../helpers/http.js";
import { type ShoalProcess, spawnShoal } from "../helpers/process.js";
import { localFolder, localRows } from "../helpers/turso-sync.js";

const TOKEN = "turso-sync-admin-token-0123456789";
let dataDir: string;
let running: ShoalProcess | undefined;
let folder: Awaited<ReturnType<typeof localFolder>>;

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "shoal-offline-"));
  folder = await localFolder();
});
afterEach(async () => {
  running?.proc.kill("SIGKILL");
  running = undefined;
  // The killed process's shards may still write for a moment before they notice it is gone.
  await rm(dataDir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
  await folder.cleanup();
});

const env = (port = "0") => ({
  SHOAL_DATA_DIR: dataDir,
  SHOAL_ADMIN_TOKEN: TOKEN,
  SHOAL_LOG_LEVEL: "info",
  SHOAL_PORT: port,
});

async function stop(p: ShoalProcess): Promise<void> {
  p.proc.kill("SIGTERM");
  expect(await p.exited).toBe(0);
}

it("pushes writes made while Shoal was down once it is back, and pulls again after the restart", async () => {
  running = await spawnShoal(env());
  const port = new URL(running.url).port;
  const api = client(running.url, TOKEN);
  await api.post("/v1/organizations/admin/groups", { name: "default", location: "aws-us-east-1" });
  expect(
    (await api.post("/v1/organizations/admin/databases", { name: "notes", group: "default" })).status,
  ).toBe(200);
  const jwt = (await api.post("/v1/organizations/admin/databases/notes/auth/tokens")).body.jwt as string;
  const remote = createClient({ url: `${running.url}/db/admin/notes/`, authToken: jwt });
  await remote.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)");
  await remote.execute("INSERT INTO notes (body) VALUES ('online')");
  remote.close();

  const url = `${running.url}/db/admin/notes`;
  const local = await connect({ path: folder.file("app.db"), url, authToken: jwt });
  expect(await localRows(local, "SELECT body FROM notes")).toEqual([{ body: "online" }]);

  await stop(running);
  running = undefined;
  await local.exec("INSERT INTO notes (body) VALUES ('written offline 1')");
  await local.exec("INSERT INTO notes (body) VALUES ('written offline 2')");
  await expect(local.push()).rejects.toThrow(/fetch/i);
  await expect(local.pull()).rejects.toThrow(/fetch/i);
  expect(await localRows(local, "SELECT count(*) AS n FROM notes")).toEqual([{ n: 3 }]);

  running = await spawnShoal(env(port));
  expect(running.url).toBe(url.replace("/db/admin/notes", ""));
  await local.push();
  const after = createClient({ url: `${running.url}/db/admin/notes/`, authToken: jwt });
  const rows = await after.execute("SELECT body FROM notes ORDER BY id");
  expect(rows.rows.map((r) => r.body)).toEqual(["online", "written offline 1", "written offline 2"]);

  await after.execute("INSERT INTO notes (body) VALUES ('after restart')");
  expect(await local.pull()).toBe(true);
  expect(await local.pull()).toBe(false);
  expect(await localRows(local, "SELECT count(*) AS n FROM notes")).toEqual([{ n: 4 }]);
  after.close();
  await local.close();
});
