import type { BackupBucket } from "./bucket.js";
import { readCatalog } from "./frames-shipping.js";
import { decodeFrames } from "./objects.js";

/** What the bucket can restore one database to, as an operator chooses a moment. */
export interface RestorePoints {
  /** The oldest restorable moment (ms): the oldest snapshot's. */
  earliest: number;
  /** Where the bucket's copy ends: the latest point a restore without a moment reaches. */
  latest: { generation: number; frame: number; committedAt: number };
  snapshots: Array<{ generation: number; frame: number; at: number }>;
  /** Objects and compressed bytes the database's folder holds. */
  objects: number;
  bytes: number;
}

/**
 * Reads a database's folder: its snapshots, the oldest restorable moment and the latest shipped
 * commit (whose time is read from the last object of the chain). Undefined: no snapshot of it.
 */
export async function restorePoints(bucket: BackupBucket, dbId: string): Promise<RestorePoints | undefined> {
  const { catalog } = await readCatalog(bucket, dbId);
  const newest = catalog.snapshotFor();
  const earliest = catalog.earliest();
  if (!newest || earliest === undefined) return undefined;
  const { steps, end } = catalog.walk(newest);
  let committedAt = newest.validFrom;
  const last = steps.at(-1);
  if (last) {
    const { body, metadata } = await bucket.get(last.key);
    const { header } = await decodeFrames(body, metadata, last.key);
    committedAt = header.commits.at(-1)?.[1] ?? committedAt;
  }
  const all = catalog.all();
  return {
    earliest,
    latest: { generation: end.generation, frame: end.frame, committedAt },
    snapshots: catalog
      .snapshots()
      .map((s) => ({ generation: s.generation, frame: s.frame, at: s.validFrom })),
    objects: all.length,
    bytes: all.reduce((n, o) => n + o.size, 0),
  };
}
