/**
 * Where each backup object lives in the bucket. Every database has a folder named by its id; every
 * generation of its frame log a folder inside it; numbers are zero-padded so that a listing's order
 * (by key, as S3 returns it) is the numeric order:
 *
 *   <prefix>/<db id>/database.json                          written first: labels, format version
 *   <prefix>/<db id>/<generation>/snapshot-<frame>-<from>.db.gz  the database as of that frame
 *   <prefix>/<db id>/<generation>/frames-<first>-<last>.gz   frames first..last, ending on a commit
 *   <prefix>/<db id>/<generation>/archive-<frames>.gz        every frame of a finished generation
 *
 * `<from>` of a snapshot is the earliest moment (ms) its state is known to have been the current
 * one, so snapshots can be chosen for a point in time, and pruned, from a listing alone.
 */
export type BackupObject =
  | { kind: "snapshot"; generation: number; frame: number; validFrom: number; key: string }
  | { kind: "frames"; generation: number; first: number; last: number; key: string }
  | { kind: "archive"; generation: number; frames: number; key: string };

const DB_ID = /^[A-Za-z0-9_-]{1,128}$/;

export const pad = (n: number, width = 10) => String(n).padStart(width, "0");

/** The key prefix every object of this instance lives under ("" or "a/b/"). */
export function rootOf(prefix: string): string {
  return prefix === "" ? "" : `${prefix}/`;
}

export function databaseFolder(prefix: string, dbId: string): string {
  if (!DB_ID.test(dbId)) throw new Error(`"${dbId}" can't name a backup folder`);
  return `${rootOf(prefix)}${dbId}/`;
}

export function manifestKey(prefix: string, dbId: string): string {
  return `${databaseFolder(prefix, dbId)}database.json`;
}

export function snapshotKey(
  prefix: string,
  dbId: string,
  g: number,
  frame: number,
  validFrom: number,
): string {
  return `${databaseFolder(prefix, dbId)}${pad(g)}/snapshot-${pad(frame)}-${pad(validFrom, 13)}.db.gz`;
}

export function framesKey(prefix: string, dbId: string, g: number, first: number, last: number): string {
  return `${databaseFolder(prefix, dbId)}${pad(g)}/frames-${pad(first)}-${pad(last)}.gz`;
}

export function archiveKey(prefix: string, dbId: string, g: number, frames: number): string {
  return `${databaseFolder(prefix, dbId)}${pad(g)}/archive-${pad(frames)}.gz`;
}

const OBJECT =
  /^(\d{10})\/(?:snapshot-(\d{10})-(\d{13})\.db\.gz|frames-(\d{10})-(\d{10})\.gz|archive-(\d{10})\.gz)$/;

/**
 * What a key inside a database's folder holds; undefined for the manifest and for anything this
 * version doesn't know (left alone, never deleted by retention).
 */
export function parseObjectKey(folder: string, key: string): BackupObject | undefined {
  if (!key.startsWith(folder)) return undefined;
  const m = OBJECT.exec(key.slice(folder.length));
  if (!m) return undefined;
  const generation = Number(m[1]);
  if (m[2] !== undefined) {
    return { kind: "snapshot", generation, frame: Number(m[2]), validFrom: Number(m[3]), key };
  }
  if (m[4] !== undefined) return { kind: "frames", generation, first: Number(m[4]), last: Number(m[5]), key };
  return { kind: "archive", generation, frames: Number(m[6]), key };
}

/** The database id a folder listed under the root names, if it is one. */
export function databaseIdOf(prefix: string, folder: string): string | undefined {
  const root = rootOf(prefix);
  if (!folder.startsWith(root) || !folder.endsWith("/")) return undefined;
  const id = folder.slice(root.length, -1);
  return DB_ID.test(id) ? id : undefined;
}
