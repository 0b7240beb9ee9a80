import { chmodSync, existsSync, lstatSync, readdirSync } from "node:fs";
import { mkdir, mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient } from "@libsql/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { client } from "../helpers/http.js";
import {
  killAndRemove,
  runShoalExpectingFailure,
  type ShoalProcess,
  spawnShoal,
} from "../helpers/process.js";

let root: string;
let dataDir: string;
let running: ShoalProcess | undefined;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "shoal-perms-"));
  dataDir = path.join(root, "data");
});
afterEach(async () => {
  await killAndRemove(running, root);
  running = undefined;
});

const env = () => ({ SHOAL_DATA_DIR: dataDir, SHOAL_LOG_LEVEL: "info" });

/** Every file and folder under `dir` (itself included) whose mode isn't 0600 (files) or 0700 (folders). */
function loose(dir: string): string[] {
  const out: string[] = [];
  const visit = (p: string) => {
    const st = lstatSync(p);
    const mode = st.mode & 0o777;
    if (st.isDirectory()) {
      if (mode !== 0o700) out.push(`${path.relative(dataDir, p) || "."} ${mode.toString(8)}`);
      for (const e of readdirSync(p)) visit(path.join(p, e));
    } else if (mode !== 0o600) out.push(`${path.relative(dataDir, p)} ${mode.toString(8)}`);
  };
  visit(dir);
  return out;
}

/** Loosens every mode under `dir`, as an older version (or a careless copy) left them. */
function loosen(dir: string, folders: number, files: number): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      loosen(p, folders, files);
      chmodSync(p, folders);
    } else chmodSync(p, files);
  }
}

/** A group over two locations, a database with a row, a replica: every kind of file Shoal makes. */
async function populate(url: string): Promise<void> {
  const admin = (await readFile(path.join(dataDir, "admin-token"), "utf8")).trim();
  const api = client(url, admin);
  await api.post("/v1/organizations/admin/groups", { name: "g", location: "aws-us-east-1" });
  expect((await api.post("/v1/organizations/admin/databases", { name: "d", group: "g" })).status).toBe(200);
  expect((await api.post("/v1/organizations/admin/groups/g/locations/aws-eu-west-1")).status).toBe(200);
  const token = (await api.post("/v1/organizations/admin/databases/d/auth/tokens")).body.jwt as string;
  const db = createClient({ url: `${url}/db/admin/d@aws-eu-west-1/`, authToken: token });
  await db.execute("CREATE TABLE t (v TEXT)");
  await db.execute("INSERT INTO t VALUES ('x')");
  db.close();
}

describe("permissions of the data folder", () => {
  it("makes every file 0600 and every folder 0700, databases, WAL, SHM, keys and replicas included", async () => {
    running = await spawnShoal(env());
    await populate(running.url);
    const files = readdirSync(path.join(dataDir, "locations", "aws-us-east-1"));
    expect(files.some((f) => f.endsWith(".db-wal"))).toBe(true);
    expect(readdirSync(path.join(dataDir, "locations", "aws-eu-west-1")).length).toBeGreaterThan(0);
    expect(loose(dataDir)).toEqual([]);
  });

  it("tightens what an older version left readable on its next start", async () => {
    running = await spawnShoal(env());
    await populate(running.url);
    running.proc.kill("SIGTERM");
    await running.exited;
    loosen(dataDir, 0o755, 0o644);
    expect(loose(dataDir).length).toBeGreaterThan(5);
    running = await spawnShoal(env());
    expect(loose(dataDir)).toEqual([]);
  });

  it("refuses a data folder other users can read, saying how to fix it, and touches nothing", async () => {
    await mkdir(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    const r = await runShoalExpectingFailure(env());
    expect(r.code).toBe(2);
    expect(r.output.trim().split("\n")).toEqual([
      `shoal: the data folder ${dataDir} can be read or written by other users (mode 0755); it holds signing keys and every database. Make it private and start again: chmod -R go-rwx ${dataDir}`,
    ]);
    expect(readdirSync(dataDir)).toEqual([]);
    chmodSync(dataDir, 0o700);
    running = await spawnShoal(env());
    expect(existsSync(path.join(dataDir, "control-plane.db"))).toBe(true);
  });
});
