import { renameSync, rmSync } from "node:fs";
import type { Deps } from "../domain/core/context.js";
import { parseSizeLimit } from "../domain/core/names.js";
import type { DataAccess } from "../domain/data-access/open.js";
import { flushClosing } from "../engine/handle-release.js";
import { DatabaseFileError, fileBytes, finishDatabaseFile } from "../engine/snapshot.js";
import { checkUploadHeader, UploadRejectedError } from "../engine/upload-check.js";
import { ConflictError, ForbiddenError, InvalidError, NotFoundError, UnavailableError } from "../errors.js";
import { isoTime } from "../lib/time.js";
import { buildReplicas } from "./instance-lifecycle.js";

/** Largest database file accepted by upload (the turso CLI's own limit). */
export const MAX_UPLOAD_BYTES = 20 * 1024 ** 3;

/** How long an install waits for the connections still open on the empty database to finish. */
const DRAIN_MS = 10_000;

export function awaitingUpload(name: string): ConflictError {
  return new ConflictError(
    `database ${name} has no content yet: it was created for an upload (seed type database_upload), so upload a SQLite file to https://<database hostname>/v1/upload first`,
    "DATABASE_AWAITING_UPLOAD",
  );
}

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
export function uploadTempPath(deps: Deps, location: string, dbId: string): string {
  return `${deps.files.path(location, dbId)}.upload`;
}

/**
 * The database an upload request may fill: one created for an upload and still waiting, reached
 * with a token that can write it (a read-only token can't replace the content).
 */
export function uploadTarget(deps: Deps, access: DataAccess): UploadTarget {
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
    tempPath: uploadTempPath(deps, db.primary_location, db.id),
    maxBytes: Math.min(limit, MAX_UPLOAD_BYTES),
  };
}

const installing = new Set<string>();

/**
 * Checks an uploaded file and installs it as the database's primary, atomically: the database
 * goes from "waiting" to "installing" (no SQL, no sync), the file is renamed over the empty one
 * while no connection is open, its replication log starts a new generation, and only then does the
 * database answer SQL. A file that fails a check changes nothing: the database keeps waiting and
 * the upload can be retried. Replicas are rebuilt from the new file before this returns.
 */
export async function installUpload(deps: Deps, target: UploadTarget, file: string): Promise<void> {
  if (installing.has(target.id)) {
    throw new ConflictError(`an upload of database ${target.name} is already being installed`, "UPLOAD_BUSY");
  }
  installing.add(target.id);
  try {
    checkFile(file, target.maxBytes);
    const started = await deps.store.write((r) => r.databases.setAwaitingUpload(target.id, 2, [1, 2]));
    deps.directory.invalidate();
    if (!started) {
      const exists = await deps.store.read((r) => r.databases.findById(target.id));
      if (!exists) throw new NotFoundError("database not found", "DATABASE_NOT_FOUND");
      throw new ConflictError(
        `database ${target.name} already received its upload`,
        "DATABASE_NOT_AWAITING_UPLOAD",
      );
    }
    try {
      await swapIn(deps, target, file);
    } catch (e) {
      await deps.store.write((r) => r.databases.setAwaitingUpload(target.id, 1, [2]));
      deps.directory.invalidate();
      throw e;
    }
    const done = await deps.store.write(async (r) => {
      if (!(await r.databases.setAwaitingUpload(target.id, 0, [2]))) return false;
      await r.audit.insert({
        org_id: target.orgId,
        code: "db-upload",
        message: `database ${target.name} received its content from an uploaded file`,
        origin: "data-plane",
        author: "database token",
        data: JSON.stringify({ database: target.name, bytes: fileBytes(target.path) }),
        created_at: isoTime(deps.clock()),
      });
      return true;
    });
    deps.directory.invalidate();
    if (!done) throw new NotFoundError("database not found", "DATABASE_NOT_FOUND");
    await rebuildReplicas(deps, target);
  } finally {
    installing.delete(target.id);
  }
}

function checkFile(file: string, maxBytes: number): void {
  const bytes = fileBytes(file);
  if (bytes > maxBytes) {
    throw new InvalidError(
      `the database file is ${bytes} bytes, more than the ${maxBytes} allowed (the database's size limit)`,
      "INVALID_DATABASE_FILE",
    );
  }
  try {
    checkUploadHeader(file);
    finishDatabaseFile(file);
  } catch (e) {
    if (e instanceof UploadRejectedError || e instanceof DatabaseFileError)
      throw new InvalidError(e.message, "INVALID_DATABASE_FILE");
    // SQLite's own refusal ("file is not a database", "database disk image is malformed").
    if (e instanceof Error && "code" in e && String(e.code).startsWith("SQLITE_"))
      throw new InvalidError(
        `the file is not a valid SQLite database: ${e.message}`,
        "INVALID_DATABASE_FILE",
      );
    throw e;
  }
}

async function swapIn(deps: Deps, target: UploadTarget, file: string): Promise<void> {
  // The checks above opened the file; its connection must be gone before the file moves.
  await flushClosing();
  for (const suffix of ["-wal", "-shm"]) rmSync(file + suffix, { force: true });
  const lock = deps.pool.writeLock(target.path);
  const owner = {};
  try {
    await lock.acquire(owner, DRAIN_MS);
  } catch {
    throw new UnavailableError(`database ${target.name} is busy; retry the upload`, "UPLOAD_BUSY");
  }
  try {
    deps.pool.retire(target.path);
    const deadline = Date.now() + DRAIN_MS;
    while (deps.pool.inUse(target.path) > 0) {
      if (Date.now() > deadline)
        throw new UnavailableError(`database ${target.name} is busy; retry the upload`, "UPLOAD_BUSY");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await flushClosing();
    deps.frameLogs.get(target.path).restart(() => {
      for (const suffix of ["-wal", "-shm", "-journal"]) rmSync(target.path + suffix, { force: true });
      renameSync(file, target.path);
    });
  } finally {
    lock.release(owner);
  }
}

/** Replicas copied the empty file; each starts over from the uploaded one. */
async function rebuildReplicas(deps: Deps, target: UploadTarget): Promise<void> {
  const db = await deps.store.read((r) => r.databases.findById(target.id));
  if (!db) return;
  const locations =
    (await deps.store.read((r) => r.groups.locationsOf([db.group_id]))).get(db.group_id) ?? [];
  for (const location of locations) {
    if (location === db.primary_location) continue;
    try {
      await deps.replicas.drop(db.id, location);
      await buildReplicas(deps, [db.id], location);
    } catch (e) {
      deps.log.error({ err: e, dbId: db.id, location }, "could not rebuild a replica after an upload");
    }
  }
}
