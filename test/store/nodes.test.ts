import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../src/store/postgres.js";
import { openSqliteStore } from "../../src/store/sqlite.js";
import type { Store } from "../../src/store/store.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";

let server: PostgresServer;
let dir: string;
const opened: Store[] = [];

beforeAll(async () => {
  server = await startPostgres();
  dir = await mkdtemp(path.join(tmpdir(), "shoal-nodes-"));
});
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
  await server.stop();
  await rm(dir, { recursive: true, force: true });
});

let n = 0;
/** Two handles on one fresh store: two pools on PostgreSQL (as two processes would have). */
const stores: Record<string, () => Promise<[Store, Store]>> = {
  sqlite: async () => {
    const s = await openSqliteStore(path.join(dir, `s${++n}`));
    opened.push(s);
    return [s, s];
  },
  postgres: async () => {
    const url = await server.newDatabase();
    const pair: [Store, Store] = [await openPostgresStore(url), await openPostgresStore(url)];
    opened.push(...pair);
    return pair;
  },
};

const node = (id: string, at = "2026-01-01T00:00:00.000Z") => ({
  id,
  url: `http://${id}:8080`,
  version: "1",
  started_at: at,
  heartbeat_at: at,
});

describe.each(Object.keys(stores))("nodes and their locations on the %s store", (kind) => {
  it("gives each location to exactly one of two nodes claiming at once", async () => {
    const [a, b] = await stores[kind]!();
    await a.write((r) => r.nodes.register(node("a")));
    await a.write((r) => r.nodes.register(node("b")));
    const codes = Array.from({ length: 30 }, (_, i) => `loc-${i}`);
    for (const code of codes) {
      await Promise.all([
        a.write((r) => r.nodes.claim("a", [code, "shared"], "t")),
        b.write((r) => r.nodes.claim("b", [code, "shared"], "t")),
      ]);
    }
    const held = await a.read(async (r) => [
      ...(await r.nodes.locationsOf("a")),
      ...(await r.nodes.locationsOf("b")),
    ]);
    expect(held.sort()).toEqual([...codes, "shared"].sort());
  });

  it("keeps a node's locations when it registers again, and frees them when it is deleted", async () => {
    const [s] = await stores[kind]!();
    await s.write(async (r) => {
      await r.nodes.register(node("a"));
      await r.nodes.claim("a", ["x", "y"], "t");
      await r.nodes.register(node("a", "2026-01-02T00:00:00.000Z"));
    });
    expect(await s.read((r) => r.nodes.locationsOf("a"))).toEqual(["x", "y"]);
    expect((await s.read((r) => r.nodes.list()))[0]).toMatchObject({ id: "a", locations: ["x", "y"] });
    expect(await s.write((r) => r.nodes.delete("a"))).toBe(true);
    await s.write(async (r) => {
      await r.nodes.register(node("b"));
      await r.nodes.claim("b", ["x"], "t");
    });
    expect(await s.read((r) => r.nodes.locationsOf("b"))).toEqual(["x"]);
  });

  it("refreshes a heartbeat only for the start that owns the record", async () => {
    const [s] = await stores[kind]!();
    await s.write((r) => r.nodes.register(node("a", "start-1")));
    expect(await s.write((r) => r.nodes.heartbeat("a", "start-1", "later"))).toBe(true);
    await s.write((r) => r.nodes.register(node("a", "start-2")));
    expect(await s.write((r) => r.nodes.heartbeat("a", "start-1", "later"))).toBe(false);
  });

  it("keeps the first key fingerprint recorded for a purpose", async () => {
    const [a, b] = await stores[kind]!();
    const [first, second] = await Promise.all([
      a.write((r) => r.nodes.recordKey("db-tokens", "f1", "t")),
      b.write((r) => r.nodes.recordKey("db-tokens", "f2", "t")),
    ]);
    expect(first).toBe(second);
    expect(await a.write((r) => r.nodes.recordKey("db-tokens", "f3", "t"))).toBe(first);
  });
});
