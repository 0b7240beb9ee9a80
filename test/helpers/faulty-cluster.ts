/**
 * Two nodes (EAST and WEST) sharing one PostgreSQL store, with a TCP proxy the caller controls on
 * every link: each node's link to the store, and the link the other node reaches each node through
 * (`SHOAL_NODE_URL`). A group `g` spans both locations with its primary in EAST, and its database
 * `d1` has the table the workload writes (helpers/history.ts). For the partition tests and bench.
 */

import type { HistoryOp, WorkloadClient } from "./history.js";
import { client } from "./http.js";
import { type Cluster, EAST, rows, run, startCluster, userWithDatabase, WEST } from "./nodes.js";
import type { ShoalProcess } from "./process.js";
import { TcpProxy } from "./tcp-proxy.js";

export interface FaultyCluster {
  a: ShoalProcess;
  b: ShoalProcess;
  /** Each node's link to PostgreSQL, by node id (`node-a`, `node-b`). */
  toStore: Map<string, TcpProxy>;
  /** The link other nodes reach each node through, by node id. */
  toNode: Map<string, TcpProxy>;
  token: string;
  /** The organization owner's API token. */
  userToken: string;
  /** The database's group's primary location, as the store has it now (asked of B, whose store link the tests keep). */
  primaryLocation(): Promise<string>;
  /** Cuts every link of the node (its store, and both ways to the other node); returns the heal. */
  isolate(nodeId: string): () => void;
  /** `count` clients through each node, named for `run` (each run writes rows of its own). */
  clients(run: string, count?: number): WorkloadClient[];
  /** Every row of the primary (or of `url`), by client. */
  finalState(url?: string): Promise<Map<string, Set<number>>>;
  /** The replica's rows at B. */
  replicaState(): Promise<Map<string, Set<number>>>;
  close(): Promise<void>;
}

const ORG = "parted";

export async function startFaultyCluster(
  leaseMs: number,
  /** More settings for both nodes (`SHOAL_FAILOVER_AFTER_MS`, say). */
  env: Record<string, string> = {},
): Promise<FaultyCluster> {
  const cluster: Cluster = await startCluster();
  const toStore = new Map<string, TcpProxy>();
  const toNode = new Map<string, TcpProxy>();
  const startNode = async (id: string, location: string) => {
    const pg = new URL(cluster.metadataUrl);
    const store = await TcpProxy.start(Number(pg.port));
    const inbound = await TcpProxy.start();
    pg.port = String(store.port);
    const p = await cluster.start(id, location, {
      SHOAL_METADATA_URL: pg.toString(),
      SHOAL_NODE_URL: `http://127.0.0.1:${inbound.port}`,
      SHOAL_PRIMARY_LEASE_MS: String(leaseMs),
      ...env,
    });
    inbound.target(Number(new URL(p.url).port));
    toStore.set(id, store);
    toNode.set(id, inbound);
    return p;
  };
  const a = await startNode("node-a", EAST);
  const b = await startNode("node-b", WEST);
  const made = await userWithDatabase(a, ORG);
  const added = await client(a.url, made.userToken).post(
    `/v1/organizations/${ORG}/groups/g/locations/${WEST}`,
  );
  if (added.status !== 200) throw new Error(`adding ${WEST}: ${added.status} ${added.text}`);
  const primary = `${a.url}/db/${ORG}/d1/`;
  const replica = `${b.url}/db/${ORG}/d1@${WEST}/`;
  await run(primary, made.token, "CREATE TABLE t (client TEXT, n INTEGER, PRIMARY KEY (client, n))");
  const stateAt = async (url: string) => {
    const out = new Map<string, Set<number>>();
    for (const [c, n] of (await rows(url, made.token, "SELECT client, n FROM t")) as Array<
      [string, number]
    >) {
      if (!out.has(c)) out.set(c, new Set());
      out.get(c)!.add(n);
    }
    return out;
  };
  return {
    a,
    b,
    toStore,
    toNode,
    token: made.token,
    userToken: made.userToken,
    async primaryLocation() {
      const r = await client(b.url, made.userToken).get(`/v1/organizations/${ORG}/groups/g`);
      return (r.body as { group: { primary: string } }).group.primary;
    },
    isolate(nodeId) {
      const other = nodeId === "node-a" ? "node-b" : "node-a";
      const links = [toStore.get(nodeId)!, toNode.get(nodeId)!, toNode.get(other)!];
      for (const l of links) l.cut("blackhole");
      return () => {
        for (const l of links) l.heal();
      };
    },
    clients: (name, count = 1) =>
      Array.from({ length: count }, (_, i) => [
        { name: `${name}-via-a-${i}`, url: primary, token: made.token },
        { name: `${name}-via-b-${i}`, url: replica, token: made.token },
      ]).flat(),
    finalState: (url = primary) => stateAt(url),
    replicaState: () => stateAt(replica),
    async close() {
      await cluster.close();
      await Promise.all([...toStore.values(), ...toNode.values()].map((p) => p.close()));
    },
  };
}

/** What a store or node partition did to the clients, as the test prints it and the bench tables it. */
export function partitionFigures(history: HistoryOp[], cutAt: number, healAt: number) {
  const refused = history.filter((o) => o.outcome === "refused");
  const back = history.filter((o) => o.kind === "write" && o.outcome === "ok" && o.end > healAt);
  const reads = history.filter((o) => o.kind === "read" && o.outcome === "ok");
  return {
    outageMs: healAt - cutAt,
    writesOk: history.filter((o) => o.kind === "write" && o.outcome === "ok").length,
    writesRefused: refused.length,
    writesUnknown: history.filter((o) => o.kind === "write" && o.outcome === "unknown").length,
    codes: [...new Set(refused.map((o) => o.why))].join(", "),
    firstRefusedMs: refused.length ? Math.min(...refused.map((o) => o.end)) - cutAt : undefined,
    writesBackMs: back.length ? Math.min(...back.map((o) => o.end)) - healAt : undefined,
    slowestReadMs: reads.length ? Math.max(...reads.map((o) => o.end - o.start)) : undefined,
    writeP50Ms: median(
      history.filter((o) => o.kind === "write" && o.outcome === "ok").map((o) => o.end - o.start),
    ),
  };
}

function median(xs: number[]): number | undefined {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}
