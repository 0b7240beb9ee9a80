import type { BackupBucket } from "./bucket.js";
import { databaseIdOf, manifestKey, rootOf } from "./layout.js";
import { decodeManifest, type Manifest } from "./objects.js";
import { type BucketRestoreOutcome, type RestoreOptions, restoreDatabase } from "./restore.js";

/** The databases the bucket holds backups of, each with its `database.json` when it has one. */
export async function listBackedUpDatabases(
  bucket: BackupBucket,
): Promise<Array<{ id: string; manifest: Manifest | undefined }>> {
  const out: Array<{ id: string; manifest: Manifest | undefined }> = [];
  for (const folder of await bucket.folders(rootOf(bucket.prefix))) {
    const id = databaseIdOf(bucket.prefix, folder);
    if (!id) continue;
    let manifest: Manifest | undefined;
    try {
      manifest = decodeManifest((await bucket.get(manifestKey(bucket.prefix, id))).body);
    } catch {
      // A folder without a readable manifest is still a database's: restorable by id.
      manifest = undefined;
    }
    out.push({ id, manifest });
  }
  return out;
}

export interface RestoreAllResult {
  id: string;
  dest: string;
  outcome?: BucketRestoreOutcome;
  /** Why this database couldn't be restored; the loop goes on with the others. */
  error?: string;
}

/**
 * Restores every database in the bucket that `pick` chooses (by its id and manifest, e.g. those
 * whose `node` label names a lost node), each into the file `pick` returns. One database failing
 * doesn't stop the others: each result says what happened.
 */
export async function restoreAll(
  bucket: BackupBucket,
  pick: (id: string, manifest: Manifest | undefined) => string | undefined,
  opts: RestoreOptions = {},
): Promise<RestoreAllResult[]> {
  const results: RestoreAllResult[] = [];
  for (const { id, manifest } of await listBackedUpDatabases(bucket)) {
    const dest = pick(id, manifest);
    if (dest === undefined) continue;
    try {
      results.push({ id, dest, outcome: await restoreDatabase(bucket, id, dest, opts) });
    } catch (e) {
      results.push({ id, dest, error: (e as Error).message });
    }
  }
  return results;
}

/**
 * Seeds a location's file from the bucket instead of from a live peer: the latest shipped state.
 * A primary's file gets a frame log that goes on after the bucket's generations, so shipping
 * resumes into the same folder; a replica's keeps none, and the returned position (generation and
 * frame, the same numbering as the primary's log) is where it continues following the primary.
 */
export async function bootstrapLocation(
  bucket: BackupBucket,
  dbId: string,
  dest: string,
  role: "primary" | "replica",
): Promise<BucketRestoreOutcome> {
  return restoreDatabase(bucket, dbId, dest, { continueLog: role === "primary" });
}
