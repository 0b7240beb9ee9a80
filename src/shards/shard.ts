import { flushClosing } from "../engine/handle-release.js";
import { watchRunningDatabase } from "../engine/running-database.js";
import { runtimeMethods } from "../hosting/database-runtimes.js";
import { armFailpoints } from "../lib/failpoints.js";
import type { Logger } from "../lib/logger.js";
import { TlsCertificates } from "../lib/tls-certificates.js";
import type { Channel } from "./channel.js";
import { HopServer } from "./hop-server.js";
import type { LeaseView, PrimaryMethods, ShardInit, ShardMethods } from "./protocol.js";
import { type Quarantined, QuarantineMirror } from "./quarantine.js";
import { Resolver } from "./resolver.js";
import { markerPath, RunningMarker } from "./running-marker.js";
import { ShardServer } from "./shard-server.js";
import { type ShardParts, wireShard } from "./shard-wiring.js";
import { hopSocketPath, SqlHop } from "./sql-hop.js";
import { wrapTls } from "./tls-door.js";

/** How often a shard drops the history its databases no longer need (as the node did). */
const PRUNE_EVERY_MS = 10 * 60_000;
/** How often a shard looks whether free space is below the reserve, when history gives way. */
const DISK_CHECK_EVERY_MS = 10_000;

let prunedAt = 0;

/**
 * Drops history past the retention every ten minutes; while free space is below the reserve,
 * every ten seconds, all of it but each database's newest archived generation (what a replica in
 * the middle of catching up needs): history gives way before live data (docs/operations/disk-full.md).
 */
function pruneHistory(parts: ShardParts, init: ShardInit): void {
  const now = Date.now();
  if (parts.disk.now(true).low) {
    parts.hosted.prune(now);
    return;
  }
  if (now - prunedAt < PRUNE_EVERY_MS) return;
  prunedAt = now;
  parts.hosted.prune(now - init.config.historyRetentionHours * 3_600_000);
}

/** A running shard: what its primary process may ask of it, and how it stops. */
export interface Shard {
  methods: ShardMethods;
  stop(): Promise<void>;
}

/** The answers a shard gives its primary process, over the databases it owns. */
function methodsOf(parts: ShardParts, server: ShardServer, hops: Hops): ShardMethods {
  const { hosted, runtimes, content, shipping, metrics, tally, dataPlane } = parts;
  return {
    // The databases' running state, as the node's services ask it (hosting/database-runtimes.ts).
    ...runtimeMethods((method, args) => (runtimes[method] as (...a: typeof args) => never)(...args)),
    ping: () => "pong",
    buildContent: (location, id, plan, maxBytes) => content.build(location, id, plan, maxBytes),
    rollover(path) {
      const db = hosted.at(path);
      const conn = db.checkout();
      try {
        return hosted.rollover(db, conn);
      } finally {
        db.checkin(conn);
      }
    },
    prune: (before) => hosted.prune(before),
    pruneLog: (path, before, keep) => hosted.at(path).frameLog.prune(before, keep).length,
    keyCount: () => parts.keys.size,
    stats: () => hosted.stats(),
    takeUsage: () => tally.take(),
    metrics: () => metrics.json(),
    streams: () => ({ open: dataPlane.openStreams(), pullWaiters: dataPlane.pullWaiters() }),
    backupStart: async () => shipping?.start(),
    backupStatus: () => (shipping ? shipping.status() : undefined),
    backupPause: async (dbId) => shipping?.hold(dbId),
    backupResume: (dbId) => shipping?.release(dbId),
    backupStop: async () => shipping?.stop(),
    async drain() {
      parts.dataPlane.close();
      parts.hop.closeAll();
      await Promise.all([server.close(), hops.close()]);
    },
  };
}

/** The shard's ends of the SQL hop (sql-hop.ts): requests out to other shards, and in from them. */
interface Hops {
  out: SqlHop | undefined;
  /** Starts taking requests from the other shards, for `server` to serve. */
  listen(server: ShardServer): Promise<void>;
  close(): Promise<void>;
}

function hopsOf(init: ShardInit, parts: ShardParts): Hops {
  const dir = init.hopDir;
  if (!dir) return { out: undefined, listen: async () => {}, close: async () => {} };
  const out = new SqlHop(dir, init.config.bodyTimeoutMs, parts.log);
  let inbound: HopServer | undefined;
  return {
    out,
    async listen(server) {
      const socketPath = hopSocketPath(dir, init.index);
      inbound = new HopServer(socketPath, (req, res) => server.hopped(req, res), parts.log);
      await inbound.listen();
    },
    async close() {
      await Promise.all([out.close(), inbound?.close()]);
    },
  };
}

/**
 * The node's certificate, loaded by the shard from the same files for the TLS connections handed
 * to it; the node process reports what it loaded. A pair that can't be loaded here (the files
 * changed in between) is logged and the shard's TLS connections are closed until a reload works.
 */
function shardCertificates(init: ShardInit, log: Logger): TlsCertificates | undefined {
  if (!init.config.tls) return undefined;
  try {
    return new TlsCertificates(init.config.tls, log, true);
  } catch (e) {
    log.error(
      { shard: init.index, error: (e as Error).message },
      "this shard can't load the TLS certificate",
    );
    return undefined;
  }
}

/**
 * Starts a shard over `init`: its parts, its server for the connections handed to it, its answers
 * to the primary process, and the events it follows (placement, leases, cache invalidation).
 */
export async function startShard(
  init: ShardInit,
  channel: Channel<ShardMethods, PrimaryMethods>,
): Promise<Shard> {
  armFailpoints(init.config.failpoints ?? []);
  const parts = await wireShard(init, channel);
  const quarantine = new QuarantineMirror();
  quarantine.update(init.quarantined);
  // Which database's statements run, kept where the node reads it if this process dies abruptly.
  const marker = new RunningMarker(markerPath(init.config.dataDir, init.index));
  watchRunningDatabase((path) => marker.note(path));
  const hops = hopsOf(init, parts);
  const server = new ShardServer({
    index: init.index,
    count: init.count,
    dbDomain: init.config.dbDomain,
    headersTimeoutMs: init.config.headersTimeoutMs,
    dataPlane: parts.dataPlane,
    resolver: new Resolver({ ...parts, count: init.count }),
    hop: parts.hop,
    sqlHop: hops.out,
    ports: init.ports,
    quarantine,
    log: parts.log,
    metrics: parts.metrics,
  });
  let tls = shardCertificates(init, parts.log);
  channel.onConnection((socket, head, _port, handshake) => {
    if (!handshake) return server.accept(socket, head);
    // A TLS connection whose handshake named one of this shard's databases: answered here.
    if (!tls) return socket.destroy();
    server.accept(
      wrapTls(socket, head ?? Buffer.alloc(0), tls.context, init.config.headersTimeoutMs),
      undefined,
    );
  });
  channel.on("tls-reload", () => {
    if (tls) tls.reload("the node reloaded it");
    else tls = shardCertificates(init, parts.log);
  });
  await hops.listen(server);
  channel.on("invalidate", () => parts.directory.invalidate());
  channel.on("placement", (d) => parts.placement.update((d as { held: string[] }).held));
  channel.on("leases", (d) => parts.leases.update(d as LeaseView[]));
  channel.on("quarantine", (d) => quarantine.update(d as Quarantined[]));
  const pruning = setInterval(() => pruneHistory(parts, init), DISK_CHECK_EVERY_MS);
  pruning.unref();
  return {
    methods: methodsOf(parts, server, hops),
    async stop() {
      clearInterval(pruning);
      parts.dataPlane.close();
      parts.hop.closeAll();
      await Promise.all([server.close(), hops.close()]);
      await parts.shipping?.stop();
      await parts.hosted.closeAll();
      await flushClosing();
      parts.keys.close();
      marker.close();
    },
  };
}
