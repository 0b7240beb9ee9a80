import type { BackupPrimary, BackupSource } from "../backup/source.js";
import type { Placement, StoreAccess } from "../domain/core/ports.js";
import type { HostedDatabases } from "../engine/hosted-databases.js";
import type { InstanceFiles } from "../engine/instance-files.js";
import type { Logger } from "../lib/logger.js";

/** A primary this node holds, with its location. */
export type HeldPrimary = BackupPrimary & { location: string };

/** What the list of this node's primaries reads. */
export interface HeldPrimariesPorts {
  store: StoreAccess;
  files: Pick<InstanceFiles, "path">;
  placement: Placement;
  log: Logger;
}

/**
 * The primaries this node holds, as the processes shipping them ask for the list: read from the
 * store at most once per `maxAgeMs` (callers asking meanwhile share the last read or the one in
 * flight). A failed read keeps the last list and is logged.
 */
export class HeldPrimaryList {
  private list: HeldPrimary[] = [];
  private readAt = 0;
  private reading: Promise<void> | undefined;
  private readonly labels = new Map<string, Record<string, string>>();

  constructor(
    private readonly ports: HeldPrimariesPorts,
    private readonly maxAgeMs: number,
  ) {}

  /** The list, read again first if older than allowed (or at all, with `fresh`: a last pass). */
  async current(fresh = false): Promise<HeldPrimary[]> {
    if (fresh || Date.now() - this.readAt >= this.maxAgeMs) await this.refresh();
    return this.list;
  }

  /** Reads the list again (one read at a time). */
  refresh(): Promise<void> {
    this.reading ??= this.read()
      .catch((e: unknown) => this.ports.log.warn({ err: e }, "backup: could not list this node's databases"))
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading;
  }

  private async read(): Promise<void> {
    const { store, placement, files } = this.ports;
    const startedAt = Date.now();
    const rows = await store.read(async (r) => {
      const held = (await r.databases.allInstances()).filter(
        (i) => i.location === i.primary_location && placement.holds(i.location),
      );
      for (const i of held) {
        if (this.labels.has(i.db_id)) continue;
        const db = await r.databases.findById(i.db_id);
        if (!db) continue;
        const labels = {
          organization: db.org_slug,
          name: db.name,
          location: i.location,
          node: placement.nodeId,
        };
        this.labels.set(i.db_id, labels);
      }
      return held;
    });
    const ids = new Set(rows.map((i) => i.db_id));
    for (const id of this.labels.keys()) if (!ids.has(id)) this.labels.delete(id);
    this.list = rows.map((i) => ({
      id: i.db_id,
      location: i.location,
      path: files.path(i.location, i.db_id),
      ...(this.labels.has(i.db_id) ? { labels: this.labels.get(i.db_id) } : {}),
    }));
    this.readAt = startedAt;
  }
}

/**
 * The primaries one process ships, as the shipper asks for them on every pass. The shipper's call
 * is synchronous and frequent, so it gets the list as last fetched, fetched again every
 * `refreshMs` while running: a database created meanwhile is shipped from the pass after that,
 * one deleted stops being shipped. A primary whose file is missing (a lost data folder not
 * restored yet) is left out, so nothing is ever shipped over the bucket's copy from an empty file.
 */
export class ShippedPrimaries implements BackupSource {
  private list: HeldPrimary[] = [];
  private readonly paused = new Set<string>();
  private refreshing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ports: {
      files: Pick<InstanceFiles, "exists">;
      hosted: Pick<HostedDatabases, "at">;
      log: Logger;
    },
    /** The primaries this process serves; `fresh`: read now, not from a recent list. */
    private readonly fetch: (fresh: boolean) => Promise<HeldPrimary[]>,
    private readonly refreshMs: number,
  ) {}

  /** Fetches the list, then again every `refreshMs` until `stop`. */
  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  primaries(): Iterable<BackupPrimary> {
    return this.list.filter((p) => !this.paused.has(p.id) && this.ports.files.exists(p.location, p.id));
  }

  log(path: string) {
    return this.ports.hosted.at(path).frameLog;
  }

  /** Leaves a database out of shipping (while it is being restored) until `resume`. */
  pause(id: string): void {
    this.paused.add(id);
  }

  resume(id: string): void {
    this.paused.delete(id);
  }

  /** Fetches the list again (one fetch at a time); a failed fetch keeps the last list and is logged. */
  refresh(fresh = false): Promise<void> {
    this.refreshing ??= this.fetch(fresh)
      .then((list) => {
        this.list = list;
      })
      .catch((e: unknown) => this.ports.log.warn({ err: e }, "backup: could not list the databases to ship"))
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }
}
