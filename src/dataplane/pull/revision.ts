import type { SyncPoint } from "../../engine/page-diff.js";

/**
 * A sync revision, as the client keeps it (an opaque string): the database's id, the generation
 * and the replication index of a committed state. The index counts frames across generations and
 * is kept in the frame log's metadata, so a revision stays meaningful across restarts and
 * checkpoints; the id keeps a revision of one database from being read as a state of another
 * (a database deleted and created again under its name starts its index over).
 */
export function formatRevision(dbId: string, at: SyncPoint): string {
  return `${dbId}:${at.generation}:${at.index}`;
}

/** The state a revision names, or undefined when it isn't one of this database's revisions. */
export function parseRevision(dbId: string, revision: string): SyncPoint | undefined {
  const m = /^([^:]+):(\d{1,15}):(\d{1,15})$/.exec(revision);
  if (!m || m[1] !== dbId) return undefined;
  return { generation: Number(m[2]), index: Number(m[3]) };
}
