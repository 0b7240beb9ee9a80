import http from "node:http";
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ownerOf } from "../../src/shards/ownership.js";
import { setupDatabase, sql, type TestDatabase } from "../helpers/dataplane.js";
import { scrape } from "../helpers/metrics.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

/**
 * Clients that share connections across databases: one `@libsql/client` per database over the
 * path URLs, which share one origin and so fetch's pool, as an app server with a client per
 * tenant does (or a proxy in front). Then most requests arrive on a connection served by a shard
 * that doesn't own their database, and go on to the owner over the SQL hop (src/shards/sql-hop.ts).
 */
const SHARDS = 2;
const DATABASES = 16;

let h: TestShoal;
let dbs: TestDatabase[];
/** A database owned by each shard. */
const on: TestDatabase[] = [];

beforeAll(async () => {
  // Room for an answer larger than the sockets' kernel buffers hold (the slow reader's test).
  h = await startTestShoal({ workers: SHARDS, maxResponseBytes: 64 * 1024 * 1024 });
  const first = await setupDatabase(h);
  dbs = [first];
  while (dbs.length < DATABASES) dbs.push(await setupDatabase(h, { user: first.user }));
  for (const i of [0, 1]) on[i] = dbs.find((d) => ownerOf(d.id, SHARDS) === i)!;
  expect(on[0] && on[1], "the databases are spread over both shards").toBeTruthy();
  await Promise.all(
    dbs.map(async (d) => {
      const c = createClient({ url: d.urls.httpPath, authToken: d.token });
      await c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
      c.close();
    }),
  );
}, 120_000);
afterAll(() => h?.close());

const hops = async () => (await scrape(h.url, h.adminToken)).value("shoal_shard_hops_total", { way: "sql" });

/** One request on `agent`, whose one socket every request shares. */
function post(
  agent: http.Agent,
  db: TestDatabase,
  body: unknown,
  token = db.token,
): Promise<{ status: number; text: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${db.urls.httpPath}v2/pipeline`,
      {
        agent,
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString(), headers: res.headers }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

/** An agent with one kept-alive connection, taken first by a request for shard `index`'s database. */
async function connectionOf(index: number): Promise<http.Agent> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const r = await post(agent, on[index]!, { requests: [sql("SELECT 1")] });
  expect(r.status, r.text).toBe(200);
  return agent;
}

/**
 * Sends requests for `target` on `agent` until one goes over the SQL hop: a shard connects its
 * link to another on first need, and the requests before that take the HTTP hop.
 */
async function warmHop(agent: http.Agent, target: TestDatabase): Promise<void> {
  await expect
    .poll(
      async () => {
        const before = await hops();
        await post(agent, target, { requests: [sql("SELECT 1")] });
        return (await hops()) > before;
      },
      { timeout: 10_000, interval: 50 },
    )
    .toBe(true);
}

describe("clients sharing connections across databases", () => {
  it("get every read and write answered by the shard owning its database, each client reading its own writes", async () => {
    const before = await hops();
    const clients = dbs.map((d) => createClient({ url: d.urls.httpPath, authToken: d.token }));
    const ROUNDS = 12;
    await Promise.all(
      clients.map(async (c, i) => {
        for (let round = 1; round <= ROUNDS; round++) {
          await c.execute({ sql: "INSERT INTO t (v) VALUES (?)", args: [`db${i}-round${round}`] });
          // Read-your-writes on connections other databases share: the row just written is there.
          const rows = (
            await c.execute("SELECT count(*) AS n, (SELECT v FROM t ORDER BY id DESC LIMIT 1) AS last FROM t")
          ).rows[0]!;
          expect(Number(rows.n)).toBe(round);
          expect(rows.last).toBe(`db${i}-round${round}`);
        }
      }),
    );
    // No database saw another's rows.
    for (const [i, c] of clients.entries()) {
      const rows = (await c.execute("SELECT v FROM t ORDER BY id")).rows.map((r) => r.v);
      expect(rows).toEqual(Array.from({ length: ROUNDS }, (_, k) => `db${i}-round${k + 1}`));
      c.close();
    }
    // fetch pooled the connections across databases, so requests crossed shards over the hop.
    expect(await hops()).toBeGreaterThan(before);
  });

  it("keep an interactive transaction's stream across connections the other databases share", async () => {
    const owner = createClient({ url: on[1]!.urls.httpPath, authToken: on[1]!.token });
    const others = dbs
      .filter((d) => d !== on[1])
      .map((d) => createClient({ url: d.urls.httpPath, authToken: d.token }));
    await owner.execute("DELETE FROM t");
    const tx = await owner.transaction("write");
    await tx.execute("INSERT INTO t (v) VALUES ('inside')");
    // Other databases' requests go over the same pooled connections meanwhile.
    await Promise.all(others.map((c) => c.execute("SELECT count(*) FROM t")));
    expect((await tx.execute("SELECT count(*) AS n FROM t")).rows[0]!.n).toBe(1);
    const outside = createClient({ url: on[1]!.urls.httpPath, authToken: on[1]!.token });
    expect((await outside.execute("SELECT count(*) AS n FROM t")).rows[0]!.n).toBe(0);
    await Promise.all(others.map((c) => c.execute("SELECT 1")));
    await tx.execute("INSERT INTO t (v) VALUES ('inside-2')");
    await tx.commit();
    expect((await outside.execute("SELECT count(*) AS n FROM t")).rows[0]!.n).toBe(2);
    for (const c of [owner, outside, ...others]) c.close();
  });

  it("pass on answers of every kind: large ones in pieces, SQL errors, refusals, and the request id", async () => {
    const agent = await connectionOf(0);
    const target = on[1]!;
    await warmHop(agent, target);
    const before = await hops();
    // About 3 MB of rows: past the size answered in one piece, so it comes back in chunks.
    const big = await post(agent, target, {
      requests: [
        sql(
          "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) SELECT i, printf('%.1000c', 'x') AS pad FROM n",
        ),
      ],
    });
    expect(big.status).toBe(200);
    const rows = JSON.parse(big.text).results[0].response.result.rows;
    expect(rows).toHaveLength(3000);
    expect(rows[2999][0]).toEqual({ type: "integer", value: "3000" });
    expect(rows[0][1].value).toHaveLength(1000);
    // A statement's error is a result of the pipeline, as when served directly.
    const bad = await post(agent, target, { requests: [sql("SELEC nonsense")] });
    expect(bad.status).toBe(200);
    expect(JSON.parse(bad.text).results[0]).toMatchObject({
      type: "error",
      error: { code: "SQL_INPUT_ERROR" },
    });
    // A request the owner refuses keeps its status and error shape.
    const refused = await post(agent, target, { requests: [sql("SELECT 1")] }, "not-a-token");
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.text)).toMatchObject({ code: expect.any(String), message: expect.any(String) });
    expect(refused.headers["x-request-id"]).toBeTruthy();
    const notJson = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        `${target.urls.httpPath}v2/pipeline`,
        { agent, method: "POST", headers: { authorization: `Bearer ${target.token}` } },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode!));
        },
      );
      req.on("error", reject);
      req.end("{not json");
    });
    expect(notJson).toBe(400);
    expect(await hops()).toBeGreaterThanOrEqual(before + 4);
    agent.destroy();
  });

  it("hold a large answer for a client that reads it slowly, and deliver it whole", async () => {
    // About 31 MB: more than the kernel's buffers on the way take, so the owner is asked to wait.
    const agent = await connectionOf(0);
    const target = on[1]!;
    await warmHop(agent, target);
    const body = JSON.stringify({
      requests: [
        sql(
          "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30000) SELECT i, printf('%.1000c', 'y') AS pad FROM n",
        ),
      ],
    });
    const text = await new Promise<string>((resolve, reject) => {
      const req = http.request(
        `${target.urls.httpPath}v2/pipeline`,
        {
          agent,
          method: "POST",
          headers: { authorization: `Bearer ${target.token}`, "content-type": "application/json" },
        },
        (res) => {
          // Nothing read for a while: the owner is asked to hold the rest of the answer.
          res.pause();
          const chunks: Buffer[] = [];
          setTimeout(() => {
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("end", () => resolve(Buffer.concat(chunks).toString()));
            res.resume();
          }, 800);
        },
      );
      req.on("error", reject);
      req.end(body);
    });
    const rows = JSON.parse(text).results[0].response.result.rows;
    expect(rows).toHaveLength(30_000);
    expect(rows[29_999][0]).toEqual({ type: "integer", value: "30000" });
    // The connection is still good for the next request.
    expect((await post(agent, target, { requests: [sql("SELECT 1")] })).status).toBe(200);
    agent.destroy();
  });

  it("answer SHARD_FAILED when the owner ends while it runs a request sent on, and go on once it is back", async () => {
    const agent = await connectionOf(0);
    const target = on[1]!;
    await warmHop(agent, target);
    // TEXT that isn't UTF-8 makes the driver panic, which ends shard 1 mid-request.
    const crashed = await post(agent, target, { requests: [sql("SELECT CAST(x'ff' AS TEXT)")] });
    expect(crashed.status).toBe(502);
    expect(JSON.parse(crashed.text)).toMatchObject({ code: "SHARD_FAILED" });
    // Once shard 1 is back, the same shared connection reaches its databases again.
    await expect
      .poll(async () => (await post(agent, target, { requests: [sql("SELECT count(*) FROM t")] })).status, {
        timeout: 20_000,
        interval: 200,
      })
      .toBe(200);
    agent.destroy();
  }, 30_000);
});

describe("a node stopping", () => {
  it("lets a request sent on over the hop finish before the shards stop", async () => {
    const agent = await connectionOf(0);
    const target = on[1]!;
    await warmHop(agent, target);
    const slow = post(agent, target, {
      requests: [
        sql(
          "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 8000000) SELECT count(*) FROM n",
        ),
      ],
    });
    await new Promise((r) => setTimeout(r, 100));
    const stopped = h.close();
    const answer = await slow;
    expect(answer.status, answer.text).toBe(200);
    expect(JSON.parse(answer.text).results[0].response.result.rows[0][0]).toEqual({
      type: "integer",
      value: "8000000",
    });
    await stopped;
    agent.destroy();
  }, 30_000);
});
