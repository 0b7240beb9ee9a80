import { renameSync, rmSync } from "node:fs";
import type { DataPlaneCache, Instances, ReplicaPort, StoreAccess } from "../domain/core/ports.js";
import { dataAccessErrors } from "../domain/data-access/errors.js";
import { type UploadTarget, uploadTempPath } from "../domain/data-access/upload-target.js";
import type { PendingUploads } from "../domain/databases/ports.js";
import { encryptFile } from "../engine/encryption/file-cipher.js";
import type { DatabaseKey } from "../engine/encryption/keys.js";
import { pageCipherFor } from "../engine/encryption/page-cipher.js";
import { flushClosing } from "../engine/handle-release.js";
import type { HostedDatabases } from "../engine/hosted-databases.js";
import type { InstanceFiles } from "../engine/instance-files.js";
import { DatabaseFileError, fileBytes, finishDatabaseFile } from "../engine/snapshot.js";
import { checkUploadHeader, UploadRejectedError } from "../engine/upload-check.js";
import type { Logger } from "../lib/logger.js";
import { type Clock, isoTime } from "../lib/time.js";
import type { DatabaseRuntimes } from "./database-runtimes.js";
import { hostingErrors } from "./errors.js";

/** How long an install waits for the connections still open on the empty database to finish. */
const DRAIN_MS = 10_000;

/** What installing an uploaded database file reaches. */
export interface UploadInstallerPorts {
  store: StoreAccess;
  files: Pick<InstanceFiles, "path">;
  /** The process serving the database swaps the file in, under its write lock. */
  runtimes: Pick<DatabaseRuntimes, "swapUpload">;
  directory: DataPlaneCache;
  instances: Pick<Instances, "buildReplicas">;
  replicas: Pick<ReplicaPort, "drop">;
  clock: Clock;
  log: Logger;
}

/** Uploaded database files, installed as their databases' primaries one at a time per database. */
export class UploadInstaller implements PendingUploads {
  private readonly installing = new Set<string>();

  constructor(private readonly ports: UploadInstallerPorts) {}

  /**
   * Checks an uploaded file and installs it as the database's primary, atomically: the database
   * goes from "waiting" to "installing" (no SQL, no sync), the file is renamed over the empty one
   * while no connection is open, its replication log starts a new generation, and only then does the
   * database answer SQL. A file that fails a check changes nothing: the database keeps waiting and
   * the upload can be retried. Replicas are rebuilt from the new file before this returns.
   */
  async install(target: UploadTarget, file: string): Promise<void> {
    if (this.installing.has(target.id)) {
      throw hostingErrors.uploadInstalling(target.name);
    }
    this.installing.add(target.id);
    try {
      await installUpload(this.ports, target, file);
    } finally {
      this.installing.delete(target.id);
    }
  }

  discard(location: string, dbId: string): void {
    rmSync(uploadTempPath(this.ports.files.path(location, dbId)), { force: true });
  }
}

async function installUpload(deps: UploadInstallerPorts, target: UploadTarget, file: string): Promise<void> {
  checkFile(file, target.maxBytes);
  if (target.key) await encryptUpload(file, target.key);
  const started = await deps.store.write((r) => r.databases.setAwaitingUpload(target.id, 2, [1, 2]));
  deps.directory.invalidate();
  if (!started) {
    const exists = await deps.store.read((r) => r.databases.findById(target.id));
    if (!exists) throw dataAccessErrors.noDatabase();
    throw hostingErrors.uploadDone(target.name);
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
  if (!done) throw dataAccessErrors.noDatabase();
  await rebuildReplicas(deps, target);
}

function checkFile(file: string, maxBytes: number): void {
  const bytes = fileBytes(file);
  if (bytes > maxBytes) {
    throw hostingErrors.uploadTooLarge(bytes, maxBytes);
  }
  try {
    checkUploadHeader(file);
    finishDatabaseFile(file);
  } catch (e) {
    if (e instanceof UploadRejectedError || e instanceof DatabaseFileError)
      throw hostingErrors.invalidDatabaseFile(e.message);
    // SQLite's own refusal ("file is not a database", "database disk image is malformed").
    if (e instanceof Error && "code" in e && String(e.code).startsWith("SQLITE_"))
      throw hostingErrors.notSqlite(e.message);
    throw e;
  }
}

/**
 * Encrypts a checked plain upload with its database's key, page by page, and checks the result
 * opens with the key. The plain file is removed (it was assembled beside the primary).
 */
async function encryptUpload(file: string, key: DatabaseKey): Promise<void> {
  await flushClosing();
  for (const suffix of ["-wal", "-shm"]) rmSync(file + suffix, { force: true });
  const sealed = `${file}.sealed`;
  try {
    await encryptFile(file, sealed, pageCipherFor(key));
    finishDatabaseFile(sealed, key);
    await flushClosing();
    for (const suffix of ["-wal", "-shm"]) rmSync(sealed + suffix, { force: true });
    renameSync(sealed, file);
  } finally {
    for (const suffix of ["", "-wal", "-shm"]) rmSync(sealed + suffix, { force: true });
  }
}

async function swapIn(deps: UploadInstallerPorts, target: UploadTarget, file: string): Promise<void> {
  // The checks above opened the file; its connection must be gone before the file moves.
  await flushClosing();
  for (const suffix of ["-wal", "-shm"]) rmSync(file + suffix, { force: true });
  await deps.runtimes.swapUpload(target.id, target.path, file, target.name);
}

/**
 * Renames a checked upload over the database's empty primary, in the process serving it: under
 * the write lock, once no connection is open, starting the frame log's next generation.
 */
export async function swapInUpload(
  hosted: Pick<HostedDatabases, "at">,
  path: string,
  file: string,
  name: string,
): Promise<void> {
  const db = hosted.at(path);
  const lock = db.writeLock;
  const owner = {};
  try {
    await lock.acquire(owner, DRAIN_MS);
  } catch {
    throw hostingErrors.uploadBusy(name);
  }
  try {
    if (!(await db.drain(DRAIN_MS))) throw hostingErrors.uploadBusy(name);
    await flushClosing();
    db.frameLog.restart(() => {
      for (const suffix of ["-wal", "-shm", "-journal"]) rmSync(path + suffix, { force: true });
      renameSync(file, path);
    });
  } finally {
    lock.release(owner);
  }
}

/** Replicas copied the empty file; each starts over from the uploaded one. */
async function rebuildReplicas(deps: UploadInstallerPorts, target: UploadTarget): Promise<void> {
  const db = await deps.store.read((r) => r.databases.findById(target.id));
  if (!db) return;
  const locations =
    (await deps.store.read((r) => r.groups.locationsOf([db.group_id]))).get(db.group_id) ?? [];
  for (const location of locations) {
    if (location === db.primary_location) continue;
    try {
      await deps.replicas.drop(db.id, location);
      await deps.instances.buildReplicas([db.id], location);
    } catch (e) {
      deps.log.error({ err: e, dbId: db.id, location }, "could not rebuild a replica after an upload");
    }
  }
}
