/**
 * A group whose locations two `shoal` processes hold: node A holds the primary's location, node B
 * another. B keeps a replica of every database of the group that follows A over the network,
 * serves reads, forwards writes with read-your-writes, and catches up after a restart.
 */
import { existsSync } from "node:fs";
import { connect } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signJwt } from "../../src/lib/jwt.js";
import { loadOrCreateSigningKey } from "../../src/lib/signing-keys.js";
import { type Client, client } from "../helpers/http.js";
import {
  type Cluster,
  EAST,
  printNodeWarningsOnFailure,
  rows,
  run,
  SETTLE_MS,
  startCluster,
  userWithDatabase,
  WEST,
  within,
} from "../helpers/nodes.js";
import type { ShoalProcess } from "../helpers/process.js";

printNodeWarningsOnFailure();

let cluster: Cluster;
let a: ShoalProcess;
let b: ShoalProcess;
let userToken: string;
const api = (): Client => client(a.url, userToken);
let token: string;
const org = "spanner";
const atA = () => `${a.url}/db/${org}/d1/`;
const atB = () => `${b.url}/db/${org}/d1@${WEST}/`;
const dbId = async (): Promise<string> =>
  (await api().get(`/v1/organizations/${org}/databases/d1`)).body.database.DbId;

/** A node-to-node token, signed with the cluster's shared key as node A signs its calls. */
async function nodeToken(): Promise<string> {
  const key = await loadOrCreateSigningKey(path.join(cluster.dirs.get("node-a")!, "keys"), "db-tokens");
  const now = Math.floor(Date.now() / 1000);
  return signJwt(key, { node: "node-a", iat: now, exp: now + 60 });
}

beforeAll(async () => {
  cluster = await startCluster();
  [a, b] = await Promise.all([cluster.start("node-a", EAST), cluster.start("node-b", WEST)]);
  ({ userToken, token } = await userWithDatabase(a, org));
  await run(atA(), token, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  await run(atA(), token, "INSERT INTO t (v) VALUES ('before B')");
}, 120_000);

afterAll(async () => {
  await cluster?.close();
});

describe("a group spanning two nodes", () => {
  it("adds B's location through A: the call goes to B, which builds the replica from A", async () => {
    const added = await api().post(`/v1/organizations/${org}/groups/g/locations/${WEST}`);
    expect(added.status, added.text).toBe(200);
    expect(added.headers.get("x-shoal-served-by")).toBe("node-b");
    expect(added.body.group.locations.sort()).toEqual([EAST, WEST].sort());
    expect(await rows(atB(), token, "SELECT v FROM t")).toEqual([["before B"]]);
  });

  it("has a write through A read at B's location without a restart or a poll from the test", async () => {
    await run(atA(), token, "INSERT INTO t (v) VALUES ('from A')");
    await within(SETTLE_MS, async () => {
      expect(await rows(atB(), token, "SELECT v FROM t ORDER BY id")).toEqual([["before B"], ["from A"]]);
    });
  });

  it("answers a location's and an instance's wait, asked at either node, once B's replica has a write", async () => {
    await run(atA(), token, "INSERT INTO t (v) VALUES ('waited for')");
    for (const node of [a, b]) {
      const user = client(node.url, userToken);
      const byLocation = await user.get(
        `/v1/organizations/${org}/groups/g/locations/${WEST}/wait?timeout=10`,
      );
      expect(byLocation.status, byLocation.text).toBe(200);
      const byInstance = await user.get(
        `/v1/organizations/${org}/databases/d1/instances/${WEST}/wait?timeout=10`,
      );
      expect(byInstance.status, byInstance.text).toBe(200);
    }
    // Answered because B had it, not because nobody looked: B's replica reads it now.
    expect(await rows(atB(), token, "SELECT count(*) FROM t WHERE v = 'waited for'")).toEqual([[1]]);
  });

  it("lands a write sent to B on A, and its writer reads it at B at once", async () => {
    const result = await run(atB(), token, "INSERT INTO t (v) VALUES ('from B')");
    expect(result.affected_row_count).toBe(1);
    // A fresh request (a new stream) at B already sees it: the write's answer waited for B's replica.
    expect(await rows(atB(), token, "SELECT count(*) FROM t WHERE v = 'from B'")).toEqual([[1]]);
    expect(await rows(atA(), token, "SELECT count(*) FROM t WHERE v = 'from B'")).toEqual([[1]]);
  });

  it("runs an interactive transaction sent to B on A", async () => {
    const r = await fetch(`${atB()}v3/pipeline`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({
        requests: [
          { type: "execute", stmt: { sql: "BEGIN" } },
          { type: "execute", stmt: { sql: "INSERT INTO t (v) VALUES ('txn')" } },
          { type: "execute", stmt: { sql: "SELECT count(*) FROM t WHERE v = 'txn'" } },
          { type: "execute", stmt: { sql: "COMMIT" } },
          { type: "close" },
        ],
      }),
    });
    const body = (await r.json()) as any;
    expect(body.results.map((x: any) => x.type)).toEqual(["ok", "ok", "ok", "ok", "ok"]);
    expect(body.results[2].response.result.rows).toEqual([[{ type: "integer", value: "1" }]]);
    expect(await rows(atB(), token, "SELECT count(*) FROM t WHERE v = 'txn'")).toEqual([[1]]);
  });

  it("refuses a write at B with the token's own rights (a read-only token)", async () => {
    const ro = (await api().post(`/v1/organizations/${org}/databases/d1/auth/tokens?authorization=read-only`))
      .body.jwt as string;
    expect(await rows(atB(), ro, "SELECT count(*) FROM t WHERE v = 'from A'")).toEqual([[1]]);
    await expect(run(atB(), ro, "INSERT INTO t (v) VALUES ('nope')")).rejects.toThrow(
      /SQLITE_READONLY|read/i,
    );
  });

  it("builds B's replica of a database created in the group afterwards", async () => {
    const db = await api().post(`/v1/organizations/${org}/databases`, { name: "d2", group: "g" });
    expect(db.status, db.text).toBe(200);
    const t2 = (await api().post(`/v1/organizations/${org}/databases/d2/auth/tokens`)).body.jwt as string;
    await run(`${a.url}/db/${org}/d2/`, t2, "CREATE TABLE x (n)");
    await run(`${b.url}/db/${org}/d2@${WEST}/`, t2, "INSERT INTO x VALUES (42)");
    expect(await rows(`${b.url}/db/${org}/d2@${WEST}/`, t2, "SELECT n FROM x")).toEqual([[42]]);
  });

  it("catches up at B after B restarts while A took writes", async () => {
    b.proc.kill("SIGKILL");
    await b.exited;
    await run(atA(), token, "INSERT INTO t (v) VALUES ('while B was down')");
    b = await cluster.start("node-b", WEST);
    await within(SETTLE_MS, async () => {
      expect(await rows(atB(), token, "SELECT count(*) FROM t WHERE v = 'while B was down'")).toEqual([[1]]);
    });
  });

  it("catches up at B after A restarts", async () => {
    a.proc.kill("SIGKILL");
    await a.exited;
    a = await cluster.start("node-a", EAST);
    await run(atA(), token, "INSERT INTO t (v) VALUES ('after A restarted')");
    await within(SETTLE_MS, async () => {
      expect(await rows(atB(), token, "SELECT count(*) FROM t WHERE v = 'after A restarted'")).toEqual([[1]]);
    });
  });

  it("keeps B running when another node hangs up halfway through a pull-now notice", async () => {
    // Signed as a node would sign it, so B reads the body; the caller dies before it is whole.
    const socket = connect(Number(new URL(b.url).port), "127.0.0.1");
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    socket.write(
      `POST /replication/${await dbId()}/notify HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
        `Authorization: Bearer ${await nodeToken()}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 200\r\n\r\n{"location":',
    );
    await new Promise((r) => setTimeout(r, 100));
    socket.destroy();
    const ended = await Promise.race([b.exited, new Promise((r) => setTimeout(() => r("running"), 1_000))]);
    expect(ended).toBe("running");
    expect(await rows(atB(), token, "SELECT count(*) FROM t")).toEqual([[expect.any(Number)]]);
  });

  it("keeps no replica at the primary's own location, whatever a pull-now notice names", async () => {
    // A notice naming A's primary location (a late one, from before a failover made it the
    // primary) must not have A open libSQL's embedded replica over the primary's own file.
    const id = await dbId();
    const r = await fetch(`${a.url}/replication/${id}/notify`, {
      method: "POST",
      headers: { authorization: `Bearer ${await nodeToken()}`, "content-type": "application/json" },
      body: JSON.stringify({ location: EAST }),
    });
    expect(r.status).toBe(204);
    const before = await rows(atA(), token, "SELECT count(*) FROM t");
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const primaryFile = path.join(cluster.dirs.get("node-a")!, "locations", EAST, `${id}.db`);
    expect(existsSync(`${primaryFile}-info`)).toBe(false);
    await run(atA(), token, "INSERT INTO t (v) VALUES ('after the notice')");
    expect(await rows(atA(), token, "SELECT count(*) FROM t")).toEqual([[(before[0]![0] as number) + 1]]);
  });

  it("restores a database deleted through B where A keeps its files, and B's replica comes back", async () => {
    const created = await api().post(`/v1/organizations/${org}/databases`, { name: "undo", group: "g" });
    expect(created.status, created.text).toBe(200);
    const first = (await api().post(`/v1/organizations/${org}/databases/undo/auth/tokens`)).body.jwt;
    await run(`${a.url}/db/${org}/undo/`, first, "CREATE TABLE t (v)");
    await run(`${a.url}/db/${org}/undo/`, first, "INSERT INTO t VALUES ('kept')");
    const viaB = client(b.url, userToken);
    const deleted = await viaB.delete(`/v1/organizations/${org}/databases/undo`);
    expect(deleted.status, deleted.text).toBe(200);
    const orgId = (await api().get(`/v1/organizations/${org}`)).body.organization.id;
    const restored = await viaB.post(
      `/v3/organizations/${orgId}/databases/${created.body.database.DbId}/restore`,
    );
    expect(restored.status, restored.text).toBe(200);
    expect(restored.headers.get("x-shoal-served-by")).toBe("node-a");
    const fresh = (await api().post(`/v1/organizations/${org}/databases/undo/auth/tokens`)).body.jwt;
    await within(SETTLE_MS, async () => {
      expect(await rows(`${b.url}/db/${org}/undo@${WEST}/`, fresh, "SELECT v FROM t")).toEqual([["kept"]]);
    });
    expect(await rows(`${a.url}/db/${org}/undo/`, fresh, "SELECT v FROM t")).toEqual([["kept"]]);
  });

  it("removes B's replicas with B's location", async () => {
    const removed = await api().delete(`/v1/organizations/${org}/groups/g/locations/${WEST}`);
    expect(removed.status, removed.text).toBe(200);
    // The location is gone from the group: whichever node answers names what is missing, once
    // the nodes' cached records (up to a second old) have caught up.
    await within(SETTLE_MS, async () => {
      const r = await fetch(`${atB()}v2/pipeline`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ requests: [{ type: "execute", stmt: { sql: "SELECT 1" } }] }),
      });
      expect(r.status).toBe(404);
      expect(await r.json()).toMatchObject({ code: "INSTANCE_NOT_FOUND" });
    });
  });
});
