import { ConflictError, ForbiddenError } from "../../errors.js";
import { parseSizeLimit } from "../core/names.js";
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
  if (access.replicaOf !== undefined)
    throw new ForbiddenError("a replication token only syncs", "AUTH_REPLICATION_ONLY");
  if (!access.canWrite) {
    throw new ForbiddenError(
      "Authorization forbidden: uploading a database needs a full-access token",
      "FORBIDDEN",
    );
  }
  const db = access.database;
  // An upload is a write: refused while the database's or its organization's writes are blocked.
  if (db.block_writes === 1 || db.org_blocked_writes === 1) {
    throw new ForbiddenError(
      db.block_writes === 1
        ? `writes to database ${db.name} are blocked (block_writes): an upload is a write`
        : `writes of organization ${db.org_slug} are blocked because it used up its plan's quota: an upload is a write`,
      "BLOCKED",
    );
  }
  if (db.awaiting_upload === 0) {
    throw new ConflictError(
      `database ${db.name} doesn't wait for an upload: only a database created with seed {"type": "database_upload"} receives one, once`,
      "DATABASE_NOT_AWAITING_UPLOAD",
    );
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
