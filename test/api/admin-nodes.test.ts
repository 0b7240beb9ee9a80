import { generateKeyPair } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_LOCATIONS } from "../../src/config.js";
import { LocalNode, NodeStartError } from "../../src/domain/cluster/local-node.js";
import { requireSharedKey } from "../../src/domain/cluster/shared-key.js";
import { createLogger } from "../../src/lib/logger.js";
import { systemClock } from "../../src/lib/time.js";
import { createUser } from "../helpers/factories.js";
import { client } from "../helpers/http.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let admin: ReturnType<typeof client>;

beforeAll(async () => {
  h = await startTestShoal({ nodeId: "edge-1", locations: [...DEFAULT_LOCATIONS.slice(0, 2)] });
  admin = client(h.url, h.adminToken);
});
afterAll(() => h.close());

const codes = DEFAULT_LOCATIONS.slice(0, 2).map((l) => l.code);

/** A node that ran once and stopped an hour ago, holding `locations`. */
async function goneNode(id: string, locations: string[]): Promise<void> {
  const anHourAgo = new Date(Date.now() - 3_600_000).toISOString();
  await h.shoal.deps.store.write(async (r) => {
    await r.nodes.register({
      id,
      url: "http://10.9.9.9:8080",
      version: "0.0.1",
      started_at: anHourAgo,
      heartbeat_at: anHourAgo,
    });
    await r.nodes.claim(id, locations, anHourAgo);
  });
}

describe("the nodes sharing the store", () => {
  it("lists this node as live, with its id, address, version and every catalogue location", async () => {
    const r = await admin.get("/v1/admin/nodes");
    expect(r.status, r.text).toBe(200);
    expect(r.body.nodes).toEqual([
      {
        id: "edge-1",
        url: h.url,
        version: "0.0.0-test",
        started_at: expect.any(String),
        heartbeat_at: expect.any(String),
        stopped_at: null,
        live: true,
        locations: [...codes].sort(),
      },
    ]);
  });

  it("shows a node that stopped as not live, keeping its locations", async () => {
    await goneNode("gone-1", ["lab-1"]);
    const r = await admin.get("/v1/admin/nodes");
    expect(r.body.nodes.find((n: { id: string }) => n.id === "gone-1")).toMatchObject({
      live: false,
      locations: ["lab-1"],
    });
  });

  it("forgets a node that is gone, and the next node to start takes its locations", async () => {
    await goneNode("gone-2", ["lab-2"]);
    expect((await admin.delete("/v1/admin/nodes/gone-2")).body).toEqual({ node: "gone-2" });
    const after = await admin.get("/v1/admin/nodes");
    expect(after.body.nodes.map((n: { id: string }) => n.id)).not.toContain("gone-2");
    const audit = await admin.get(`/v1/organizations/admin/audit-logs`);
    expect(JSON.stringify(audit.body)).toContain("node-forget");

    await h.restart();
    const r = await client(h.url, h.adminToken).get("/v1/admin/nodes");
    const me = r.body.nodes.find((n: { id: string }) => n.id === "edge-1");
    // Not in its catalogue: a location is taken only when the node offers it.
    expect(me.locations).not.toContain("lab-2");
    expect(me.locations).toEqual([...codes].sort());
    expect(me.live).toBe(true);
  });

  it("refuses to forget a live node (409) or one that doesn't exist (404)", async () => {
    const live = await client(h.url, h.adminToken).delete("/v1/admin/nodes/edge-1");
    expect(live.status).toBe(409);
    expect(live.body.error).toContain("is live");
    expect((await client(h.url, h.adminToken).delete("/v1/admin/nodes/nobody")).status).toBe(404);
  });

  it("is for instance administrators only", async () => {
    const bob = await createUser(h);
    expect((await bob.api.get("/v1/admin/nodes")).status).toBe(403);
    expect((await bob.api.delete("/v1/admin/nodes/gone-1")).status).toBe(403);
    expect((await client(h.url, null).get("/v1/admin/nodes")).status).toBe(401);
  });
});

describe("the status of the node answering", () => {
  it("shows its shards, and per location its replicas and how far they trail", async () => {
    const before = await admin.get("/v1/admin/node");
    expect(before.status, before.text).toBe(200);
    expect(before.body).toEqual({
      node: "edge-1",
      shards: [
        { index: 0, serving: true },
        { index: 1, serving: true },
      ],
      quarantined: 0,
      replication: [],
      // One node on the embedded store: no leases, so no standbys.
      primaries: [],
    });
    const [primary, replica] = codes as [string, string];
    expect(
      (await admin.post("/v1/organizations/admin/groups", { name: "status", location: primary })).status,
    ).toBe(200);
    expect((await admin.post(`/v1/organizations/admin/groups/status/locations/${replica}`)).status).toBe(200);
    for (const name of ["s1", "s2"])
      expect((await admin.post("/v1/organizations/admin/databases", { name, group: "status" })).status).toBe(
        200,
      );
    const wait = await admin.get(
      `/v1/organizations/admin/groups/status/locations/${replica}/wait?timeout=10`,
    );
    expect(wait.status, wait.text).toBe(200);
    const after = await admin.get("/v1/admin/node");
    expect(after.body.replication).toEqual([{ location: replica, replicas: 2, behind_ms: 0 }]);
  });

  it("is for instance administrators only", async () => {
    const bob = await createUser(h);
    expect((await bob.api.get("/v1/admin/node")).status).toBe(403);
  });
});

describe("joining the nodes sharing a store", () => {
  it("refuses a second process with the node id of a live node at another address", async () => {
    const twin = new LocalNode(h.shoal.deps.store, systemClock, createLogger("silent"), "edge-1");
    const joining = twin.join("http://127.0.0.1:1", "0.0.0-test", []);
    await expect(joining).rejects.toThrow(NodeStartError);
    await expect(joining).rejects.toThrow(/node id edge-1 is in use by a live node/);
  });

  it("makes a node whose record another start took over hold nothing from its next heartbeat", async () => {
    const { store } = h.shoal.deps;
    const log = createLogger("silent");
    const first = new LocalNode(store, systemClock, log, "taken-over");
    await first.join("http://127.0.0.1:1", "0.0.0-test", ["lab-takeover"]);
    expect([...first.locations]).toEqual(["lab-takeover"]);
    // The same id starting again at the same address (a copied data folder) takes the record.
    // (A clock a second ahead: the two starts must not share a start time.)
    const later = () => new Date(Date.now() + 1000);
    const second = new LocalNode(store, later, log, "taken-over");
    await second.join("http://127.0.0.1:1", "0.0.0-test", ["lab-takeover"]);
    await first.heartbeat();
    expect(first.holds("lab-takeover")).toBe(false);
    expect(second.holds("lab-takeover")).toBe(true);
    await second.leave();
    await first.leave();
  });

  it("refuses a node whose database-token key differs from the one recorded for the store", async () => {
    const { store } = h.shoal.deps;
    await requireSharedKey(store, systemClock, "db-tokens", h.shoal.deps.dbTokenKey, "keys/db-tokens.jwk");
    const pair = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
    const other = {
      ...h.shoal.deps.dbTokenKey,
      publicKey: pair.publicKey,
      publicJwk: { kty: "OKP", crv: "Ed25519", x: "another-public-key" },
    };
    await expect(
      requireSharedKey(store, systemClock, "db-tokens", other, "keys/db-tokens.jwk"),
    ).rejects.toThrow(/Copy the keys\/ folder of a running node/);
  });
});
