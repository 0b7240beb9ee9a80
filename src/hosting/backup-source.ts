import type { BackupPrimary, BackupSource } from "../backup/source.js";
import type { Placement, StoreAccess } from "../domain/core/ports.js";
import type { HostedDatabases } from "../engine/hosted-databases.js";
import type { InstanceFiles } from "../engine/instance-files.js";
import type { Logger } from "../lib/logger.js";

/** What the list of primaries to ship reads. */
export interface HeldPrimariesPorts {
  store: StoreAccess;
  files: Pick<InstanceFiles, "path" | "exists">;
  hosted: Pick<HostedDatabases, "at">;
  placement: Placement;
  log: Logger;
}

/**
 * The primaries this node holds, as the shipper asks for them on every pass. The shipper's call
 * is synchronous and frequent, so it gets the list as last read from the store, read again every
 * `refreshMs` while running: a database created meanwhile is shipped from the pass after that,
 * one deleted stops being shipped. A primary whose file is missing (a lost data folder not
 * restored yet) is left out, so nothing is ever shipped over the bucket's copy from an empty file.
 */
export class HeldPrimaries implements BackupSource {
  private list: Array<BackupPrimary & { location: string }> = [];
  private readonly labels = new Map<string, Record<string, string>>();
  private readonly paused = new Set<string>();
  private refreshing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ports: HeldPrimariesPorts,
    private readonly refreshMs: number,
  ) {}

  /** Reads the list, then again every `refreshMs` until `stop`. */
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

  /** Reads the list again (one read at a time); a failed read keeps the last list and is logged. */
  refresh(): Promise<void> {
    this.refreshing ??= this.read()
      .catch((e: unknown) => this.ports.log.warn({ err: e }, "backup: could not list this node's databases"))
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }

  private async read(): Promise<void> {
    const { store, placement, files } = this.ports;
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
      labels: this.labels.get(i.db_id),
    }));
  }
}
