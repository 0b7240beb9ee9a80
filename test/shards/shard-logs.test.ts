import { readFileSync, readlinkSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  processTree,
  type ServerProcess,
  startServerProcess,
  type Tenant,
  tenantOn,
} from "../helpers/isolation.js";

/**
 * A node run as operators run it (its log on its standard output): each shard writes its own lines
 * to that same output, not through the primary process, and many requests on both shards at once
 * still leave every line whole.
 */
const SHARDS = 2;
let server: ServerProcess;
const tenants: Tenant[] = [];

beforeAll(async () => {
  server = await startServerProcess({ SHOAL_WORKERS: String(SHARDS) });
  for (let i = 0; i < SHARDS; i++) tenants.push(await tenantOn(server, "CREATE TABLE t (v TEXT)", i, SHARDS));
}, 120_000);
afterAll(() => server?.close());

const jsonLines = () =>
  server
    .output()
    .split("\n")
    .filter((l) => l.includes('"level":'));

describe("a node's shards' log lines", () => {
  it("are written by the shards to the node's own output", () => {
    const primaryOut = readlinkSync(`/proc/${server.pid}/fd/1`);
    const shards = processTree(server.pid).filter((p) =>
      readFileSync(`/proc/${p}/cmdline`, "utf8").includes("shard-main"),
    );
    expect(shards).toHaveLength(SHARDS);
    for (const pid of shards) expect(readlinkSync(`/proc/${pid}/fd/1`)).toBe(primaryOut);
  });

  it("stay whole lines while both shards log many requests at once", async () => {
    // Ten different statements a request, each shape cut at its longest: the longest line a
    // request gets. (Sent as SQL text: the official client sends a batch's statements stored.)
    const requests = Array.from({ length: 10 }, (_, j) => ({
      type: "execute",
      stmt: { sql: `INSERT INTO t (v) SELECT 'x' AS a${j}${"a".repeat(200)}` },
    }));
    const body = JSON.stringify({ requests: [...requests, { type: "close" }] });
    const send = async (t: Tenant) => {
      const r = await fetch(`${t.http}v2/pipeline`, {
        method: "POST",
        headers: { authorization: `Bearer ${t.token}` },
        body,
      });
      expect(r.status).toBe(200);
      await r.arrayBuffer();
    };
    await Promise.all(
      [...tenants, ...tenants].map(async (t) => {
        for (let i = 0; i < 60; i++) await send(t);
      }),
    );
    const ours = () => jsonLines().filter((l) => l.includes("a".repeat(50)));
    await expect.poll(() => ours().length, { timeout: 15_000 }).toBe(240);
    // Every line of the node's log parses: none was cut into or mixed with another.
    for (const l of jsonLines()) expect(() => JSON.parse(l)).not.toThrow();
    const batches = ours().map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(batches.every((l) => l.msg === "data plane request")).toBe(true);
    expect(new Set(batches.map((l) => l.shard))).toEqual(new Set([0, 1]));
    for (const l of batches) expect((l.statements as string[]).length).toBe(10);
    expect(server.output()).not.toContain(tenants[0]!.token);
  });
});
