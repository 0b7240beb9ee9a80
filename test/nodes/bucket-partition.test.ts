/**
 * The backup bucket cut off from the primary's node while clients write and read through both
 * nodes: a TCP proxy the test controls sits between each node and the S3 server (s3rver). Nothing
 * on the data plane waits for the bucket, so no write is refused or slowed into a timeout; the
 * bucket falls behind (`shoal_backup_delay_seconds` says so), catches up once the link heals, and
 * a restore from it then holds every acknowledged write.
 */
import { mkdirSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restoreDatabase } from "../../src/backup/restore.js";
import { TestPrimaries } from "../helpers/backup-primaries.js";
import { checkHistory, runWorkload, tally } from "../helpers/history.js";
import { client } from "../helpers/http.js";
import {
  type Cluster,
  EAST,
  printNodeWarningsOnFailure,
  run,
  SETTLE_MS,
  startCluster,
  userWithDatabase,
  WEST,
  within,
} from "../helpers/nodes.js";
import type { ShoalProcess } from "../helpers/process.js";
import { startTestS3, type TestS3 } from "../helpers/s3-server.js";
import { ADMIN_TOKEN } from "../helpers/shoal.js";
import { type CutMode, TcpProxy } from "../helpers/tcp-proxy.js";

printNodeWarningsOnFailure();

const ORG = "bucketcut";
const PREFIX = "cut";
let cluster: Cluster;
let s3: TestS3;
let a: ShoalProcess;
let b: ShoalProcess;
/** Each node's link to the bucket. */
const toBucket = new Map<string, TcpProxy>();
let token: string;
let dbId: string;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  [cluster, s3] = await Promise.all([startCluster(), startTestS3()]);
  const start = async (id: string, location: string) => {
    const proxy = await TcpProxy.start(Number(new URL(s3.endpoint).port));
    toBucket.set(id, proxy);
    return cluster.start(id, location, {
      SHOAL_BACKUP_URL: `s3://${s3.bucket}/${PREFIX}`,
      SHOAL_BACKUP_ENDPOINT: `http://127.0.0.1:${proxy.port}`,
      SHOAL_BACKUP_ACCESS_KEY_ID: "S3RVER",
      SHOAL_BACKUP_SECRET_ACCESS_KEY: "S3RVER",
      SHOAL_BACKUP_INTERVAL_MS: "200",
    });
  };
  a = await start("node-a", EAST);
  b = await start("node-b", WEST);
  const made = await userWithDatabase(a, ORG);
  ({ token, dbId } = made);
  const added = await client(a.url, made.userToken).post(
    `/v1/organizations/${ORG}/groups/g/locations/${WEST}`,
  );
  expect(added.status, added.text).toBe(200);
  await run(
    `${a.url}/db/${ORG}/d1/`,
    token,
    "CREATE TABLE t (client TEXT, n INTEGER, PRIMARY KEY (client, n))",
  );
  // A ships the database before the cuts: a restore from the bucket finds it.
  await within(SETTLE_MS, async () => {
    const dest = path.join(tmpdir(), `shoal-bucket-first-${Date.now()}`, "d.db");
    mkdirSync(path.dirname(dest), { recursive: true });
    try {
      expect((await restoreDatabase(s3.client(PREFIX), dbId, dest)).kind).toBe("restored");
    } finally {
      await rm(path.dirname(dest), { recursive: true, force: true });
    }
  });
}, 120_000);

afterAll(async () => {
  await cluster?.close();
  await Promise.all([...toBucket.values()].map((p) => p.close()));
  await s3?.close();
});

/** How far behind A's bucket is, as A's metrics say (seconds). */
async function bucketDelay(): Promise<number> {
  const m = await client(a.url, ADMIN_TOKEN).get("/metrics");
  const line = /^shoal_backup_delay_seconds (\S+)$/m.exec(m.text);
  if (!line) throw new Error("no shoal_backup_delay_seconds in A's metrics");
  return Number(line[1]);
}

describe("the bucket out of reach of the primary's node", () => {
  it.each([
    ["blackhole", "a partition (nothing answers)"],
    ["one-way", "requests arrive, answers are lost"],
  ] as const)(
    "%s, %s: writes and reads go on, the bucket catches up after, and holds every acknowledged write",
    async (mode: CutMode, _what: string) => {
      const clients = [
        { name: `${mode}-via-a`, url: `${a.url}/db/${ORG}/d1/`, token },
        { name: `${mode}-via-b`, url: `${b.url}/db/${ORG}/d1@${WEST}/`, token },
      ];
      await within(SETTLE_MS, async () => expect(await bucketDelay()).toBe(0));
      const load = runWorkload(clients, { timeoutMs: 8000, pauseMs: 20 });
      await sleep(1000);
      const link = toBucket.get("node-a")!;
      link.cut(mode, "from-target");
      await sleep(5000);
      // The bucket is behind: commits made since the cut aren't in it.
      const behind = await bucketDelay();
      link.heal();
      await sleep(1000);
      const history = await load.stop();
      expect(behind, "bucket delay at the end of the cut").toBeGreaterThan(1);
      // Nothing on the data plane waited for the bucket: every write and read was answered.
      expect(
        history.filter((o) => o.outcome !== "ok"),
        JSON.stringify(tally(history)),
      ).toEqual([]);
      // Once healed, the bucket catches up and a restore from it holds every acknowledged write.
      await within(SETTLE_MS * 2, async () => expect(await bucketDelay()).toBe(0));
      const dir = path.join(tmpdir(), `shoal-bucket-cut-${mode}-${Date.now()}`);
      const restored = new TestPrimaries(dir);
      try {
        const dest = restored.path(dbId);
        mkdirSync(path.dirname(dest), { recursive: true });
        expect(await restoreDatabase(s3.client(PREFIX), dbId, dest)).toMatchObject({ kind: "restored" });
        restored.adopt(dbId);
        // The engine's own reads give integers as BigInt.
        const rows = restored.rows(dbId, "SELECT client, n FROM t") as Array<[string, bigint]>;
        const inBucket = new Map<string, Set<number>>();
        for (const [c, n] of rows) inBucket.set(c, (inBucket.get(c) ?? new Set()).add(Number(n)));
        expect(checkHistory(history, inBucket)).toEqual([]);
        console.log(`bucket ${mode}: ${behind} s behind at the heal; ${JSON.stringify(tally(history))}`);
      } finally {
        await restored.close();
        await rm(dir, { recursive: true, force: true });
      }
    },
    90_000,
  );
});
