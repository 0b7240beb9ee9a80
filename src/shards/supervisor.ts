import { mkdtempSync, rmSync } from "node:fs";
import net, { type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Logger } from "../lib/logger.js";
import { ChannelClosedError, type Remote } from "./channel.js";
import type { InternalPorts, PrimaryMethods, ShardInit, ShardMethods } from "./protocol.js";
import { Quarantine } from "./quarantine.js";
import { refuseRaw, shardUnavailable } from "./refusals.js";
import { markerPath, readMarker } from "./running-marker.js";
import { type ShardExit, ShardProcess } from "./shard-process.js";
import { hopSocketPath } from "./sql-hop.js";

/**
 * Whether a shard's end may be its statements' doing: the driver aborted (a Rust panic is
 * SIGABRT) or crashed, or the watchdog killed it for a loop that stopped answering. A SIGKILL or
 * SIGTERM from outside (an operator, the kernel's out-of-memory killer) says nothing of which
 * database was at fault, and counts against none.
 */
function byItsStatements(e: ShardExit): boolean {
  return e.killed || ["SIGABRT", "SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE"].includes(e.signal ?? "");
}

/** Longest Unix socket path every platform takes (macOS's limit; Linux's is 107). */
const MAX_SOCKET_PATH = 103;

/**
 * A private folder (mode 0700, so only the node's user reaches the sockets) for the shards' hop
 * sockets, in the system's temporary folder, whose paths are short. Undefined where the paths
 * would still be too long: requests then hop over HTTP only.
 */
function hopFolder(count: number): string | undefined {
  // One shard has no other to send requests to.
  if (count < 2) return undefined;
  const dir = mkdtempSync(path.join(tmpdir(), "shoal-"));
  if (hopSocketPath(dir, count - 1).length <= MAX_SOCKET_PATH) return dir;
  rmSync(dir, { recursive: true, force: true });
  return undefined;
}

/** A connection waiting for its shard to be ready (at start, or while it restarts) waits this long at most. */
const PENDING_MS = 15_000;
/** How often each shard's event loop is asked to answer. */
const PING_EVERY_MS = 500;
/** A shard that keeps ending within this long of its start is started again after a growing pause. */
const CRASH_LOOP_MS = 10_000;
const MAX_BACKOFF_MS = 5_000;

export interface SupervisorOptions {
  count: number;
  /** What every shard is started with (its index is set per shard). */
  init: Omit<ShardInit, "index" | "ports" | "held" | "quarantined" | "hopDir"> & { held: () => string[] };
  log: Logger;
  /**
   * A shard whose event loop doesn't answer for this long is killed and started again: the one
   * way to stop a statement stuck in the driver on its thread (and its other tenants wait no longer).
   */
  watchdogMs: number;
}

/** What starting the shards needs from the node, once its parts exist. */
export interface SupervisorStart {
  /** Takes the connections of the primary process's own internal port. */
  acceptPrimary(socket: Socket, head: Buffer | undefined): void;
  /** What the node answers its shards. */
  answers: PrimaryMethods;
  /** Where the shards' JSON log lines go; without it, to the node's own standard output. */
  logLines?(line: string): void;
  /** Tells the node's parts a shard started again (it has nothing but what it is sent). */
  restarted?(index: number): void;
  /** Tells the node's parts a shard ended by itself or was killed (metrics). */
  ended?(index: number, how: "crashed" | "killed"): void;
}

interface Pending {
  socket: Socket;
  head: Buffer | undefined;
  at: number;
  /** The head is the start of a TLS handshake, which the shard answers. */
  tls: boolean;
}

/**
 * The node's shards: starts them, hands them their connections, keeps them running. A shard that
 * ends on its own (a crash, a driver panic) or stops answering (the watchdog) is started again at
 * once, and again after a growing pause if it keeps ending; connections for it wait meanwhile.
 * Each shard and this process also get an internal loopback port, which requests are sent on
 * to (hop.ts) and replicas sync from: it stays the same across a shard's restarts.
 */
export class Supervisor {
  readonly shards: ShardProcess[];
  private readonly pending: Pending[][];
  private readonly servers: Server[] = [];
  private ports: InternalPorts = { primary: 0, shards: [] };
  private hopDir: string | undefined;
  private started: SupervisorStart | undefined;
  private stopping = false;
  private watchdog: NodeJS.Timeout | undefined;
  private readonly pinging = new Map<number, number>();
  /** Calls to a shard known to run long on its event loop (a copy, a restore): no watchdog meanwhile. */
  private readonly excused = new Map<number, number>();
  private readonly crashes = new Map<number, number>();
  /** Databases refused for a while: their statements ran when their shard died, more than once. */
  readonly quarantine = new Quarantine();

  constructor(private readonly opts: SupervisorOptions) {
    this.shards = Array.from({ length: opts.count }, (_, i) => new ShardProcess(i));
    this.pending = this.shards.map(() => []);
    for (const s of this.shards) s.on("excuse", (holding) => this.excuse(s.index, holding === true));
  }

  get count(): number {
    return this.shards.length;
  }

  get internalPorts(): InternalPorts {
    return this.ports;
  }

  /** The private folder of the shards' SQL hop sockets (sql-hop.ts), once started. */
  get sqlHopDir(): string | undefined {
    return this.hopDir;
  }

  /** Follows an event of every shard's, across their restarts. */
  on(event: string, fn: (data: unknown) => void): void {
    for (const s of this.shards) s.on(event, fn);
  }

  /** Opens the internal ports, starts every shard and waits until each serves. */
  async start(start: SupervisorStart): Promise<void> {
    this.started = start;
    const shardPorts: number[] = [];
    for (const s of this.shards)
      shardPorts.push(await this.internal((socket) => this.deliver(s.index, socket)));
    const primary = await this.internal((socket) => start.acceptPrimary(socket, undefined));
    this.ports = { primary, shards: shardPorts };
    this.hopDir = hopFolder(this.count);
    for (const s of this.shards) this.launch(s);
    await Promise.all(this.shards.map((s) => s.ready));
    this.watchdog = setInterval(() => this.watch(), PING_EVERY_MS);
    this.watchdog.unref();
  }

  /** Hands a connection to shard `index`, now or once it is ready again. */
  deliver(index: number, socket: Socket, head?: Buffer, tls = false): void {
    const shard = this.shards[index]!;
    if (shard.serving && shard.handOver(socket, head, (s, h) => this.deliver(index, s, h, tls), tls)) return;
    if (this.stopping) return void socket.destroy();
    this.pending[index]!.push({ socket, head, at: Date.now(), tls });
  }

  /** The same event to every shard (one that is starting gets the state it needs at its start). */
  broadcast(event: string, data: unknown): void {
    for (const s of this.shards) if (s.serving) s.emit(event, data);
  }

  /** Calls `fn` on every shard that serves; the answers of those that do, in shard order. */
  async each<T>(fn: (remote: Remote<ShardMethods>, index: number) => Promise<T>): Promise<T[]> {
    const out = await Promise.all(
      this.shards.map(async (s) => {
        if (!s.serving) return undefined;
        try {
          return { value: await fn(s.remote, s.index) };
        } catch (e) {
          if (e instanceof ChannelClosedError) return undefined;
          throw e;
        }
      }),
    );
    return out.filter((r) => r !== undefined).map((r) => r.value);
  }

  /**
   * Shard `index`'s methods, once it serves. `long`: the call may hold the shard's event loop for
   * a while (copying or restoring a database), so the watchdog leaves it alone meanwhile.
   */
  async call<T>(index: number, fn: (remote: Remote<ShardMethods>) => Promise<T>, long = false): Promise<T> {
    const shard = this.shards[index]!;
    await this.readyWithin(shard);
    if (!long) return fn(shard.remote);
    this.excuse(index, true);
    try {
      return await fn(shard.remote);
    } finally {
      this.excuse(index, false);
    }
  }

  /** Work that holds shard `index`'s loop on purpose started (true) or ended (false). */
  private excuse(index: number, holding: boolean): void {
    const left = Math.max(0, (this.excused.get(index) ?? 0) + (holding ? 1 : -1));
    this.excused.set(index, left);
    // A ping sent during the work may be answered just after it: the watch starts over.
    if (left === 0) this.pinging.delete(index);
  }

  /** Lets each shard finish its requests in flight; no new connections are handed over after. */
  async drain(): Promise<void> {
    this.stopping = true;
    for (const list of this.pending) for (const p of list.splice(0)) p.socket.destroy();
    await this.each((r) => r.drain());
  }

  /** Stops every shard (after `drain` and whatever the node still asks of them), and the internal ports. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.watchdog);
    await Promise.all(this.shards.map((s) => s.stop(20_000)));
    // The ports are free at once. (`close` would call back only once every connection it ever
    // accepted ended, and those handed to a shard are never counted as ended here.)
    for (const s of this.servers) s.close();
    if (this.hopDir) rmSync(this.hopDir, { recursive: true, force: true });
  }

  private async readyWithin(shard: ShardProcess): Promise<void> {
    if (shard.serving) return;
    const deadline = Date.now() + PENDING_MS;
    while (!shard.serving) {
      if (this.stopping || Date.now() > deadline)
        throw new ChannelClosedError(`shard ${shard.index} is not running`);
      await Promise.race([shard.ready.catch(() => {}), new Promise((r) => setTimeout(r, 50))]);
    }
  }

  private async internal(onConnection: (socket: Socket) => void): Promise<number> {
    const server = net.createServer({ pauseOnConnect: true, noDelay: true }, (socket) => {
      // It may wait for a restarting shard and then be refused: a reset meanwhile mustn't go unheard.
      socket.on("error", () => socket.destroy());
      onConnection(socket);
    });
    this.servers.push(server);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => {
        server.off("error", reject);
        // A failed accept is emitted here; the server goes on listening.
        server.on("error", () => {});
        resolve();
      });
    });
    return (server.address() as net.AddressInfo).port;
  }

  private launch(shard: ShardProcess): void {
    const { init } = this.opts;
    const started = this.started!;
    shard.start(
      {
        ...init,
        held: init.held(),
        index: shard.index,
        ports: this.ports,
        hopDir: this.hopDir,
        quarantined: this.quarantine.list(),
      },
      started.answers,
      started.logLines,
    );
    void shard.ready.then(
      () => this.flush(shard.index),
      () => undefined,
    );
    void shard.exited.then((e) => this.ended(shard, e));
  }

  private flush(index: number): void {
    const shard = this.shards[index]!;
    const list = this.pending[index]!.splice(0);
    for (const p of list) {
      if (p.socket.destroyed) continue;
      if (!shard.handOver(p.socket, p.head, (s, h) => this.deliver(index, s, h, p.tls), p.tls))
        this.pending[index]!.push(p);
    }
  }

  private ended(shard: ShardProcess, e: ShardExit): void {
    this.pinging.delete(shard.index);
    this.excused.delete(shard.index);
    if (this.stopping) return;
    const how = e.failedToStart
      ? `couldn't be started: ${e.failedToStart}`
      : e.killed
        ? "killed: its event loop stopped answering"
        : e.signal
          ? `ended by ${e.signal}`
          : `exited with code ${e.code}`;
    this.started?.ended?.(shard.index, e.killed ? "killed" : "crashed");
    const suspect = readMarker(markerPath(this.opts.init.config.dataDir, shard.index));
    if (suspect && byItsStatements(e)) this.suspect(shard.index, suspect.dbId);
    const quick = Date.now() - shard.startedAt < CRASH_LOOP_MS;
    const crashes = quick ? (this.crashes.get(shard.index) ?? 0) + 1 : 1;
    this.crashes.set(shard.index, crashes);
    const pauseMs = crashes <= 1 ? 0 : Math.min(MAX_BACKOFF_MS, 250 * 2 ** (crashes - 2));
    this.opts.log.error(
      { shard: shard.index, pid: shard.pid, how, restartInMs: pauseMs, runningDatabase: suspect?.dbId },
      "a shard ended; its databases are unavailable until it is started again",
    );
    setTimeout(() => {
      if (this.stopping) return;
      this.launch(shard);
      void shard.ready.then(
        () => {
          this.opts.log.info({ shard: shard.index, pid: shard.pid }, "shard started again");
          this.started?.restarted?.(shard.index);
        },
        () => undefined,
      );
    }, pauseMs).unref();
  }

  /** A shard died while `dbId`'s statements ran: a second time in a while puts it in quarantine. */
  private suspect(index: number, dbId: string): void {
    const q = this.quarantine.died(dbId);
    if (!q) return;
    this.opts.log.error(
      { shard: index, dbId, crashes: q.crashes, until: new Date(q.until).toISOString() },
      "a database's statements were running each time its shard ended: it is refused until the time given (DATABASE_QUARANTINED)",
    );
    this.broadcast("quarantine", this.quarantine.list());
  }

  /** Pings every serving shard; one whose last ping went unanswered for too long is killed. */
  private watch(): void {
    const now = Date.now();
    this.pending.forEach((list, index) => {
      for (let i = list.length - 1; i >= 0; i--) {
        const p = list[i]!;
        if (p.socket.destroyed) list.splice(i, 1);
        else if (now - p.at > PENDING_MS) {
          list.splice(i, 1);
          refuseRaw(p.socket, shardUnavailable(index, now - p.at));
        }
      }
    });
    for (const s of this.shards) {
      if (!s.serving) continue;
      const since = this.pinging.get(s.index);
      if (since !== undefined) {
        if (now - since > this.opts.watchdogMs && (this.excused.get(s.index) ?? 0) === 0) {
          this.opts.log.error(
            { shard: s.index, pid: s.pid, silentMs: now - since },
            "a shard's event loop stopped answering; killing it",
          );
          s.kill();
        }
        continue;
      }
      this.pinging.set(s.index, now);
      s.remote.ping().then(
        () => this.pinging.delete(s.index),
        () => this.pinging.delete(s.index),
      );
    }
  }
}
