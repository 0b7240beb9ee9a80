import { parseSizeLimit } from "../core/names.js";
import { dataAccessErrors } from "./errors.js";
import type { DataAccess } from "./open.js";

/** Largest database file accepted by upload (the turso CLI's own limit). */
export const MAX_UPLOAD_BYTES = 20 * 1024 ** 3;

/** A database ready to receive an upload, as the data plane needs it. */
export interface UploadTarget {
  id: string;
  name: string;
  orgId: string;
  location: string;
  /** The primary's file, which the upload replaces. */
  path: string;
  /** Where the upload is written before it is checked and installed. */
  tempPath: string;
  maxBytes: number;
}

/** The file an upload of a database is assembled in, beside its primary (one upload at a time). */
export function uploadTempPath(primaryPath: string): string {
  return `${primaryPath}.upload`;
}

/**
 * The database an upload request may fill: one created for an upload and still waiting, reached
 * with a token that can write it (a read-only token can't replace the content).
 */
export function uploadTarget(access: DataAccess): UploadTarget {
  if (access.replicaOf !== undefined) throw dataAccessErrors.replicationOnly();
  if (!access.canWrite) {
    throw dataAccessErrors.uploadNeedsFullAccess();
  }
  const db = access.database;
  // An upload is a write: refused while the database's or its organization's writes are blocked.
  if (db.block_writes === 1 || db.org_blocked_writes === 1) {
    throw db.block_writes === 1
      ? dataAccessErrors.databaseWritesBlocked(db.name)
      : dataAccessErrors.organizationWritesBlocked(db.org_slug);
  }
  if (db.awaiting_upload === 0) {
    throw dataAccessErrors.notAwaitingUpload(db.name);
  }
  const limit = db.size_limit ? parseSizeLimit(db.size_limit) : MAX_UPLOAD_BYTES;
  return {
    id: db.id,
    name: db.name,
    orgId: db.org_id,
    location: db.primary_location,
    path: access.path,
    tempPath: uploadTempPath(access.path),
    maxBytes: Math.min(limit, MAX_UPLOAD_BYTES),
  };
}
