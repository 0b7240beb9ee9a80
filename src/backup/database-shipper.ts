import { randomBytes } from "node:crypto";
import { rm, stat } from "node:fs/promises";
import path from "node:path";
import type { Catalog, ChainPoint } from "./catalog.js";
import { readCatalog, readFrames, shipArchive, shipFrames } from "./frames-shipping.js";
import { manifestKey, snapshotKey } from "./layout.js";
import { CHECKSUM, decodeManifest, encodeManifest } from "./objects.js";
import type { ShippingContext } from "./shipping-context.js";
import { buildSnapshot } from "./snapshot-file.js";
import type { BackupLog, BackupPrimary } from "./source.js";

/** A fresh snapshot once the frames shipped since the last one outweigh it, and at least this much. */
const SNAPSHOT_AFTER_BYTES = 16 * 1024 * 1024;
/** Steps one run may take, so one busy database can't hold a pass forever. */
const MAX_STEPS = 64;

/**
 * Ships one primary's frame log to the bucket, picking up where the bucket's chain ends: the
 * frames of the current generation after the last shipped one; a finished generation as one
 * archive object (its small objects then deleted); a snapshot whenever the chain can't go on
 * (nothing shipped yet, or the frames in between are gone from this node) and periodically.
 * Throws on any bucket error; the caller retries the whole run later, which is safe because every
 * step is an upload under a name fixed by what it holds, recorded only once it succeeded.
 */
export class DatabaseShipper {
  private catalog: Catalog | undefined;
  private lastPrune = 0;
  /** Why this database can't be shipped (its log is behind what the bucket has), if so. */
  diverged: string | undefined;

  constructor(
    readonly primary: BackupPrimary,
    private readonly ctx: ShippingContext,
  ) {}

  /** Where the bucket's chain ends, once the bucket was read. */
  get position(): ChainPoint | undefined {
    return this.catalog?.end();
  }

  get loaded(): boolean {
    return this.catalog !== undefined;
  }

  async run(log: BackupLog): Promise<void> {
    if (!this.catalog) this.catalog = await this.load();
    if (this.diverged) return;
    for (let steps = 0; steps < MAX_STEPS; steps++) {
      if (!(await this.step(log, this.catalog))) break;
    }
    if (!this.diverged && this.snapshotDue(log, this.catalog)) await this.snapshot(log, this.catalog);
    if (this.ctx.now() - this.lastPrune >= this.ctx.pruneEveryMs) await this.prune(this.catalog);
  }

  /** One upload towards the log's position; false once there is nothing left to do. */
  private async step(log: BackupLog, catalog: Catalog): Promise<boolean> {
    const local = log.position();
    const at = catalog.end();
    if (!at) return this.snapshot(log, catalog);
    if (
      at.generation > local.generation ||
      (at.generation === local.generation && (at.finished || at.frame > local.frame))
    ) {
      this.diverged =
        `the bucket holds generation ${at.generation} up to frame ${at.frame}, but this node's log is at ` +
        `generation ${local.generation} frame ${local.frame}: restore the database from the bucket, or move its backup folder away`;
      return false;
    }
    const { id } = this.primary;
    if (at.generation === local.generation) {
      if (at.frame === local.frame) return false;
      const shipped = await shipFrames(this.ctx, id, log, at.generation, at.frame, local.frame);
      if (!shipped) return this.snapshot(log, catalog);
      catalog.add(shipped);
      this.ctx.shipped({ dbId: id, generation: at.generation, frame: shipped.last, at: this.ctx.now() });
      return true;
    }
    const chain = log.chain();
    if (at.finished) {
      // The next generation starts from where the archive ended, if this node still has it whole.
      const next = at.generation + 1;
      if (next !== local.generation && !chain.archived.some((a) => a.generation === next))
        return this.snapshot(log, catalog);
      const frames = readFrames(log, next);
      if (frames === 0) return false;
      const shipped = await shipFrames(this.ctx, id, log, next, 0, frames);
      if (!shipped) return this.snapshot(log, catalog);
      catalog.add(shipped);
      this.ctx.shipped({ dbId: id, generation: next, frame: shipped.last, at: this.ctx.now() });
      return true;
    }
    const archived = chain.archived.find((a) => a.generation === at.generation);
    if (!archived || archived.frames < at.frame) return this.snapshot(log, catalog);
    const archive = await shipArchive(this.ctx, id, log, at.generation, archived.frames);
    if (!archive) return this.snapshot(log, catalog);
    catalog.add(archive);
    this.ctx.shipped({ dbId: id, generation: at.generation, frame: archived.frames, at: this.ctx.now() });
    const small = catalog.superseded(at.generation);
    await this.ctx.bucket.delete(small);
    catalog.remove(small);
    return true;
  }

  private snapshotDue(log: BackupLog, catalog: Catalog): boolean {
    const newest = catalog.snapshotFor();
    const local = log.position();
    const end = catalog.end();
    if (!newest || !end || end.generation !== local.generation || end.frame !== local.frame) return false;
    if (newest.generation === local.generation && newest.frame === local.frame) return false;
    const size = catalog.all().find((o) => o.key === newest.key)?.size ?? 0;
    const since = catalog.bytesSinceSnapshot();
    return (
      this.ctx.now() - newest.validFrom >= this.ctx.snapshotIntervalMs ||
      since >= Math.max(size, SNAPSHOT_AFTER_BYTES)
    );
  }

  /** Uploads the database as it is now; false when a checkpoint moved it meanwhile (try later). */
  private async snapshot(log: BackupLog, catalog: Catalog): Promise<boolean> {
    const work = path.join(this.ctx.workDir, `${this.primary.id}-${randomBytes(4).toString("hex")}`);
    const built = await buildSnapshot(log, work, this.ctx.now());
    if (!built) return false;
    try {
      const key = snapshotKey(
        this.ctx.bucket.prefix,
        this.primary.id,
        built.generation,
        built.frame,
        built.validFrom,
      );
      await this.ctx.bucket.putFile(key, built.gzFile, {
        [CHECKSUM]: built.sha256,
        "start-index": String(built.startIndex),
      });
      const { size } = await stat(built.gzFile);
      const { generation, frame, validFrom } = built;
      catalog.add({ kind: "snapshot", generation, frame, validFrom, key, size });
      // Said in the same turn as the catalog moves: the status (read from the catalog) never shows
      // frames as shipped before those listening were told.
      this.ctx.shipped({ dbId: this.primary.id, generation, frame, at: this.ctx.now() });
    } finally {
      await rm(built.gzFile, { force: true });
    }
    await this.prune(catalog);
    return true;
  }

  private async prune(catalog: Catalog): Promise<void> {
    this.lastPrune = this.ctx.now();
    const expired = catalog.expired(this.ctx.now() - this.ctx.retentionMs);
    if (expired.length === 0) return;
    await this.ctx.bucket.delete(expired);
    catalog.remove(expired);
  }

  /** Reads what the bucket holds for this database, and writes its manifest when missing or stale. */
  private async load(): Promise<Catalog> {
    const { bucket } = this.ctx;
    const { catalog, keys } = await readCatalog(bucket, this.primary.id);
    const key = manifestKey(bucket.prefix, this.primary.id);
    const labels = { ...(this.primary.labels ?? {}) };
    let since = this.ctx.now();
    if (keys.has(key)) {
      const current = decodeManifest((await bucket.get(key)).body);
      if (JSON.stringify(current.labels) === JSON.stringify(labels)) return catalog;
      since = current.since;
    }
    await bucket.put(key, encodeManifest({ format: 1, id: this.primary.id, labels, since }));
    return catalog;
  }
}
