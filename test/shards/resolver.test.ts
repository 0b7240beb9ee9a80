import { describe, expect, it } from "vitest";
import { routeRequest } from "../../src/dataplane/routing.js";
import type { DataPlaneDatabase } from "../../src/domain/data-access/ports.js";
import { createLogger } from "../../src/lib/logger.js";
import { ownerOf } from "../../src/shards/ownership.js";
import { Resolver } from "../../src/shards/resolver.js";

/**
 * The one decision of where a data-plane request goes (src/shards/resolver.ts), over a directory
 * and a table of location holders kept in memory: the node's real ones read the store, which the
 * cases here are about not waiting for.
 */
const EAST = "aws-us-east-1";
const WEST = "aws-eu-west-1";
const record = {
  id: "0f2c7d2e-7a53-4c49-9d55-3c1e8b0a9f11",
  name: "notes",
  primary_location: EAST,
  locations: [EAST, WEST],
} as unknown as DataPlaneDatabase;
const NODE_B = { id: "node-b", url: "http://127.0.0.1:1" };

function resolver(opts: { held: string[]; cached?: boolean; holders?: () => unknown }) {
  const asked: string[] = [];
  const r = new Resolver({
    count: 4,
    log: createLogger("silent"),
    directory: {
      peek: () => (opts.cached === false ? undefined : record),
      find: async () => record,
    },
    placement: { nodeId: "node-a", holds: (l: string) => opts.held.includes(l) },
    holders: {
      of: (location: string) => {
        asked.push(location);
        return (opts.holders?.() ?? NODE_B) as never;
      },
    },
  });
  return { r, asked };
}

const route = (url: string) => routeRequest("127.0.0.1:8080", url, "shoal.test")!;

describe("the resolver", () => {
  it("decides record, node, process and turn at once, synchronously for a cached database", () => {
    const { r } = resolver({ held: [EAST] });
    const got = r.resolve(route("/db/acme/notes/v2/pipeline"), { method: "POST", headers: {} });
    expect(got).not.toBeInstanceOf(Promise);
    expect(got).toMatchObject({
      record,
      node: { here: true },
      process: { kind: "shard", index: ownerOf(record.id, 4) },
      turn: record.id,
      path: "/v2/pipeline",
    });
  });

  it("sends a request for a location another node holds to that node, and one already sent on is refused", async () => {
    const { r } = resolver({ held: [EAST] });
    const there = await r.resolve(route(`/db/acme/notes@${WEST}/v2/pipeline`), { headers: {} });
    expect(there.node).toEqual({ here: false, holder: NODE_B, database: "notes" });
    // A node holding neither: a request another node sent here is never sent on a second time.
    const again = await resolver({ held: [] }).r.resolve(route(`/db/acme/notes@${WEST}/v2/pipeline`), {
      headers: { "x-shoal-forwarded-by": "node-c" },
    });
    expect(again.node).toMatchObject({ here: false, refusal: { status: 421, code: "DATABASE_ELSEWHERE" } });
  });

  it("serves a write another node sent on here when this node holds the primary, whatever location it names", () => {
    const { r, asked } = resolver({ held: [EAST] });
    const got = r.resolve(route(`/db/acme/notes@${WEST}/v2/pipeline`), {
      headers: { "x-shoal-forwarded-by": "node-b" },
    });
    expect(got).toMatchObject({ node: { here: true } });
    expect(asked).toEqual([]);
  });

  it("gives the process of a new connection without asking who holds a location (the store may be out of reach)", async () => {
    const never = () => new Promise(() => {});
    const { r, asked } = resolver({ held: [EAST], holders: never });
    expect(r.process(route(`/db/acme/notes@${WEST}/v2/pipeline`))).toEqual({
      kind: "shard",
      index: ownerOf(record.id, 4),
    });
    const uncached = resolver({ held: [EAST], cached: false, holders: never });
    expect(await uncached.r.process(route(`/db/acme/notes@${WEST}/v2/pipeline`))).toEqual({
      kind: "shard",
      index: ownerOf(record.id, 4),
    });
    expect([...asked, ...uncached.asked]).toEqual([]);
  });

  it("keeps the node's own replication traffic in the primary process, and a replica's sync with the owner", () => {
    const { r } = resolver({ held: [] });
    const notify = route(`/replication/${record.id}/notify`);
    expect(r.process(notify, "POST")).toEqual({ kind: "primary" });
    expect(r.resolve(route(`/replication/${record.id}/sync/1/0/10`), { method: "GET" })).toMatchObject({
      node: { here: true },
      process: { kind: "shard", index: ownerOf(record.id, 4) },
    });
  });

  it("places a database that can't be found by its name, for the local data plane to answer", async () => {
    const r = new Resolver({
      count: 4,
      log: createLogger("silent"),
      directory: { peek: () => undefined, find: () => Promise.reject(new Error("store down")) },
      placement: { nodeId: "node-a", holds: () => true },
      holders: { of: () => NODE_B },
    });
    const got = await r.resolve(route("/db/acme/missing/v2/pipeline"));
    expect(got).toMatchObject({ record: undefined, node: { here: true }, turn: "name:acme/missing" });
    expect(got.process).toEqual({ kind: "shard", index: ownerOf("name:acme/missing", 4) });
  });
});
