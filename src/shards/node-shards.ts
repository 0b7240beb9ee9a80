import type { ShipperStatus } from "../backup/shipper.js";
import type { BuiltContent, ContentPlan, DatabaseContent } from "../domain/databases/ports.js";
import type { InstanceFiles } from "../engine/instance-files.js";
import type { PoolStats } from "../engine/pool.js";
import type { ShippingControl } from "../hosting/backup-service.js";
import { type DatabaseRuntimes, RUNTIME_CALLS, runtimeMethods } from "../hosting/database-runtimes.js";
import type { UsageBatch } from "../hosting/usage-tally.js";
import { ownerOf } from "./ownership.js";
import type { Supervisor } from "./supervisor.js";

/**
 * The node's shards as its services see them: each request about a database's running state goes
 * to the shard owning it (`DatabaseRuntimes`), content is built where its source is served, and
 * shipping, usage counts and statistics are gathered from every shard.
 */
export class NodeShards {
  constructor(
    /** The shard processes themselves (their states, for the administrator). */
    readonly supervisor: Supervisor,
    private readonly files: Pick<InstanceFiles, "path" | "remove">,
  ) {}

  get count(): number {
    return this.supervisor.count;
  }

  ownerOf(dbId: string): number {
    return ownerOf(dbId, this.supervisor.count);
  }

  /** The base URL of the process serving `dbId`, on loopback (what this node's replicas sync from). */
  urlOf(dbId: string): string {
    return `http://127.0.0.1:${this.supervisor.internalPorts.shards[this.ownerOf(dbId)]}`;
  }

  /**
   * The databases' running state (`DatabaseRuntimes`): each call goes to the shard owning the
   * database it is about, as `RUNTIME_CALLS` says.
   */
  readonly runtimes: DatabaseRuntimes = runtimeMethods((method, args) => {
    const how = RUNTIME_CALLS[method] as { database(...a: unknown[]): string; long: boolean };
    const index = this.ownerOf(how.database(...args));
    type Any = (...a: unknown[]) => Promise<never>;
    return this.supervisor.call(index, (r) => (r[method] as Any)(...args), how.long) as never;
  });

  /**
   * New databases' content, built by the shard serving what it is copied from (a branch or a
   * restore reads its source's connections and history), else by the one that will serve it.
   */
  readonly content: DatabaseContent = {
    build: (location: string, id: string, plan: ContentPlan, maxBytes: number): Promise<BuiltContent> => {
      const from = plan.source?.id ?? plan.schemaParent?.id ?? id;
      return this.supervisor.call(
        this.ownerOf(from),
        (r) => r.buildContent(location, id, plan, maxBytes),
        true,
      );
    },
    discard: (location: string, id: string) => this.files.remove(location, id),
  };

  /** Backup shipping, done by each shard for the primaries it owns. */
  readonly shipping: ShippingControl = {
    start: async () => {
      await this.supervisor.each((r) => r.backupStart());
    },
    stop: async () => {
      await this.supervisor.each((r) => r.backupStop());
    },
    status: async () => {
      const all = (await this.supervisor.each(async (r) => r.backupStatus())).filter(
        (s): s is ShipperStatus => s !== undefined,
      );
      return {
        delayMs: Math.max(0, ...all.map((s) => s.delayMs)),
        databases: all.flatMap((s) => s.databases),
      };
    },
    hold: (dbId: string) => this.supervisor.call(this.ownerOf(dbId), (r) => r.backupPause(dbId)),
    release: (dbId: string) => {
      void this.supervisor.call(this.ownerOf(dbId), (r) => r.backupResume(dbId)).catch(() => undefined);
    },
  };

  /** What every shard counted since the last time it was asked. */
  usage(): Promise<UsageBatch[]> {
    return this.supervisor.each((r) => r.takeUsage());
  }

  /** Every shard's metrics, as prom-client's JSON. */
  metrics(): Promise<unknown[][]> {
    return this.supervisor.each((r) => r.metrics());
  }

  /** Connections open in every shard together. */
  async stats(): Promise<PoolStats> {
    const all = await this.supervisor.each((r) => r.stats());
    return all.reduce(
      (a, s) => ({
        open: a.open + s.open,
        idle: a.idle + s.idle,
        inUse: a.inUse + s.inUse,
        databases: a.databases + s.databases,
      }),
      { open: 0, idle: 0, inUse: 0, databases: 0 },
    );
  }

  /** Hrana streams open and pulls waiting, in every shard together (tests, diagnostics). */
  async streams(): Promise<{ open: number; pullWaiters: number }> {
    const all = await this.supervisor.each((r) => r.streams());
    return all.reduce((a, s) => ({ open: a.open + s.open, pullWaiters: a.pullWaiters + s.pullWaiters }), {
      open: 0,
      pullWaiters: 0,
    });
  }

  /** Ends a primary's current generation now (tests of generation changes). */
  rollover(location: string, dbId: string): Promise<boolean> {
    const path = this.files.path(location, dbId);
    return this.supervisor.call(this.ownerOf(dbId), (r) => r.rollover(path));
  }

  /** Drops one primary's archived generations that ended before `before`, keeping the newest `keep`. */
  pruneLog(location: string, dbId: string, before: number, keep: number): Promise<number> {
    const path = this.files.path(location, dbId);
    return this.supervisor.call(this.ownerOf(dbId), (r) => r.pruneLog(path, before, keep));
  }

  /** Keys of encrypted databases held in memory, in every shard together. */
  async keyCount(): Promise<number> {
    return (await this.supervisor.each((r) => r.keyCount())).reduce((a, n) => a + n, 0);
  }

  /** Drops archived generations that ended before `before`, in every shard. */
  async prune(before: number): Promise<number> {
    return (await this.supervisor.each((r) => r.prune(before))).reduce((a, n) => a + n, 0);
  }
}
