import { Worker } from "node:worker_threads";
import type { ReplicaRows } from "../domain/core/ports.js";
import type { Logger } from "../lib/logger.js";

export interface ReplicaSpec {
  path: string;
  syncUrl: string;
  token: string;
}

export type { ReplicaRows } from "../domain/core/ports.js";

interface SyncTurn {
  running: Promise<void>;
  next?: Promise<void>;
}

const noop = () => undefined;

/** How long a call to a location's worker runs before the log says so. */
const SLOW_CALL_MS = 10_000;

/** An error reported by the worker for one request. */
export class WorkerError extends Error {
  constructor(
    message: string,
    readonly code?: string,
    readonly rawCode?: number,
  ) {
    super(message);
  }
}

/**
 * The main thread's handle on one location's worker. A worker that dies is started again on the
 * next request, and the replicas it knew are declared to it again before that request runs.
 */
export class LocationWorker {
  private worker: Worker | undefined;
  private next = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly specs = new Map<string, ReplicaSpec>();
  /** Each replica's sync in flight, and the one every call made meanwhile waits for. */
  private readonly syncs = new Map<string, SyncTurn>();
  private healthy = true;

  constructor(
    readonly location: string,
    private readonly log: Logger,
    private readonly maxOpen = 256,
  ) {}

  get up(): boolean {
    return this.healthy;
  }

  async open(key: string, spec: ReplicaSpec): Promise<void> {
    this.specs.set(key, spec);
    await this.call({ op: "open", key, ...spec });
  }

  /** Declares a replica that exists on disk; the worker opens it on first use. */
  async register(key: string, spec: ReplicaSpec): Promise<void> {
    this.specs.set(key, spec);
    await this.call({ op: "register", key, ...spec });
  }

  /** Whether this worker has been told about the replica `key`. */
  knows(key: string): boolean {
    return this.specs.has(key);
  }

  /**
   * Pulls what the replica's primary has. Calls for one replica don't pile up: while a sync runs,
   * every call shares one more that starts after it (and so pulls everything committed before
   * them). Without that, a primary committing faster than a pull takes queues syncs without end,
   * and this location's reads, which run in the same thread, wait behind all of them.
   */
  sync(key: string): Promise<void> {
    const turn = this.syncs.get(key);
    if (turn) {
      turn.next ??= turn.running.then(noop, noop).then(() => this.sync(key));
      return turn.next;
    }
    const started: SyncTurn = { running: this.call({ op: "sync", key }).then(noop) };
    this.syncs.set(key, started);
    // Registered before any `next`: the turn is over before the next one starts.
    started.running.then(noop, noop).then(() => {
      if (this.syncs.get(key) === started) this.syncs.delete(key);
    });
    return started.running;
  }

  query(key: string, sql: string, args: unknown): Promise<ReplicaRows> {
    return this.call({ op: "query", key, sql, args }) as Promise<ReplicaRows>;
  }

  async drop(key: string, path: string): Promise<void> {
    this.specs.delete(key);
    await this.call({ op: "drop", key, path });
  }

  /** Closes a replica and forgets it, leaving its files. */
  async release(key: string): Promise<void> {
    this.specs.delete(key);
    await this.call({ op: "release", key });
  }

  /** Stops the worker (its replicas stay on disk); the next request starts it again. */
  async stop(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    if (w) {
      await this.call({ op: "close-all" }, w).catch(() => undefined);
      await w.terminate();
    }
  }

  private start(): Worker {
    const w = new Worker(new URL("./location-worker.js", import.meta.url), {
      workerData: { maxOpen: this.maxOpen },
    });
    w.on(
      "message",
      (m: { id: number; ok: boolean; result?: unknown; error?: string; code?: string; rawCode?: number }) => {
        const p = this.pending.get(m.id);
        this.pending.delete(m.id);
        if (m.ok) p?.resolve(m.result);
        else p?.reject(new WorkerError(m.error ?? "replica worker failed", m.code, m.rawCode));
      },
    );
    const fail = (e: Error) => {
      this.healthy = false;
      if (this.worker === w) this.worker = undefined;
      for (const [id, p] of this.pending) {
        this.pending.delete(id);
        p.reject(e);
      }
    };
    w.on("error", (e) => {
      this.log.error({ err: e, location: this.location }, "replica worker failed");
      fail(e);
    });
    w.on("exit", (code) => {
      if (this.worker === w) fail(new Error(`replica worker of ${this.location} exited (${code})`));
    });
    w.unref();
    return w;
  }

  private async ensureWorker(): Promise<Worker> {
    if (this.worker) return this.worker;
    const w = this.start();
    this.worker = w;
    this.healthy = true;
    // A restarted worker learns its replicas again; it reopens each one on first use.
    for (const [key, spec] of this.specs)
      this.post(w, { op: "register", key, ...spec }).catch(() => undefined);
    return w;
  }

  private async call(msg: Record<string, unknown>, worker?: Worker): Promise<unknown> {
    return this.post(worker ?? (await this.ensureWorker()), msg);
  }

  /**
   * An idle worker doesn't keep the process alive (it is unref'd), but one with a request in
   * flight does: otherwise a shutdown awaiting its answer could see the process exit under it.
   */
  private post(w: Worker, msg: Record<string, unknown>): Promise<unknown> {
    const id = this.next++;
    // Calls run one at a time, and a pull blocks the thread: a call this slow says what the
    // location's reads are waiting behind (the first one logged is the one holding the thread).
    const slow = setTimeout(() => {
      const { op, key } = msg;
      this.log.warn(
        { location: this.location, op, key, ms: SLOW_CALL_MS },
        "replica worker call still running",
      );
    }, SLOW_CALL_MS);
    slow.unref();
    return new Promise<unknown>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      w.ref();
      w.postMessage({ id, ...msg });
    }).finally(() => clearTimeout(slow));
  }
}
