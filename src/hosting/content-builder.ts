import { mkdirSync } from "node:fs";
import path from "node:path";
import type { BuiltContent, ContentPlan, DatabaseContent, SeedFacts } from "../domain/databases/ports.js";
import type { EngineConnection } from "../engine/connection.js";
import type { DumpFiles } from "../engine/dump-files.js";
import { DumpError, importDump } from "../engine/dump-import.js";
import { encryptFile } from "../engine/encryption/file-cipher.js";
import type { DatabaseKey } from "../engine/encryption/keys.js";
import { pageCipherFor } from "../engine/encryption/page-cipher.js";
import { flushClosing } from "../engine/handle-release.js";
import type { HostedDatabases } from "../engine/hosted-databases.js";
import type { InstanceFiles } from "../engine/instance-files.js";
import { restoreAsOf } from "../engine/point-in-time.js";
import { createWithSchema, readSchema } from "../engine/schema-copy.js";
import {
  DatabaseFileError,
  fileBytes,
  finishDatabaseFile,
  removeDatabaseFile,
  snapshotInto,
} from "../engine/snapshot.js";
import { damagedMessage, isDamaged } from "../engine/sqlite-errors.js";
import type { Clock } from "../lib/time.js";
import type { DatabaseWithPlacement } from "../store/databases.js";
import { hostingErrors } from "./errors.js";
import { schemaJournal } from "./schema-propagation.js";

/** What building a new database's content reaches. */
export interface ContentBuilderPorts {
  files: InstanceFiles;
  hosted: HostedDatabases;
  dumps: Pick<DumpFiles, "text">;
  clock: Clock;
}

/** A new database's first content: empty, a copy (now or at a moment), a dump, or a schema. */
export class ContentBuilder implements DatabaseContent {
  constructor(private readonly ports: ContentBuilderPorts) {}

  build(location: string, id: string, plan: ContentPlan, maxBytes: number): Promise<BuiltContent> {
    return buildContent(this.ports, location, id, plan, maxBytes);
  }

  discard(location: string, id: string): void {
    this.ports.files.remove(location, id);
  }
}

/**
 * Writes a copy of `source` into `dest`: its current committed state (a consistent snapshot taken
 * while writes go on), or its state at `at` rebuilt from its replication history.
 */
function copyDatabase(
  deps: ContentBuilderPorts,
  source: DatabaseWithPlacement,
  dest: string,
  at: number | undefined,
  key: DatabaseKey | undefined,
): SeedFacts {
  const hosted = deps.hosted.at(deps.files.path(source.primary_location, source.id));
  const now = deps.clock().getTime();
  if (at === undefined) {
    try {
      const conn = hosted.checkout(key);
      try {
        snapshotInto(conn, dest, key);
      } finally {
        hosted.checkin(conn);
      }
    } catch (e) {
      if (isDamaged(e)) throw hostingErrors.uncopyable(source.name, damagedMessage(e));
      if (e instanceof DatabaseFileError) throw hostingErrors.uncopyable(source.name, e.message);
      throw e;
    }
    return { parentId: source.id, branchedAt: new Date(now).toISOString() };
  }
  // A connection stays open meanwhile, so SQLite can't checkpoint the WAL being read on a close.
  // A file SQLite can't open is damaged; nothing can checkpoint it, and its history may still
  // rebuild the past (that is how such a database is recovered).
  let conn: EngineConnection | undefined;
  try {
    conn = hosted.checkout(key);
  } catch (e) {
    if (!isDamaged(e)) throw e;
  }
  let outcome: ReturnType<typeof restoreAsOf>;
  try {
    outcome = restoreAsOf(hosted.frameLog, at, dest, {
      createdAt: Date.parse(source.created_at),
      now,
      ...(key ? { key } : {}),
    });
  } catch (e) {
    if (e instanceof DatabaseFileError) throw hostingErrors.restoredDamaged(e.message);
    throw e;
  } finally {
    if (conn) hosted.checkin(conn);
  }
  if (outcome.kind === "future") {
    throw hostingErrors.restoreInFuture(new Date(at).toISOString(), new Date(outcome.now).toISOString());
  }
  if (outcome.kind === "before-history") {
    throw hostingErrors.restoreBeforeHistory(
      new Date(at).toISOString(),
      source.name,
      new Date(outcome.earliest).toISOString(),
    );
  }
  return { parentId: source.id, branchedAt: new Date(at).toISOString() };
}

/**
 * A copy of a plain database, encrypted: the plain copy is built beside `dest` (the source is
 * plain on the same disk already), its pages encrypted into `dest`, and the plain copy removed.
 */
async function copyEncrypted(
  deps: ContentBuilderPorts,
  source: DatabaseWithPlacement,
  dest: string,
  at: number | undefined,
  key: DatabaseKey,
): Promise<SeedFacts> {
  const plain = `${dest}.plain`;
  try {
    const facts = copyDatabase(deps, source, plain, at, undefined);
    // The copy's connection must be closed (its WAL folded in) before its pages are read.
    await flushClosing();
    await encryptFile(plain, dest, pageCipherFor(key));
    finishDatabaseFile(dest, key);
    return facts;
  } finally {
    removeDatabaseFile(plain);
  }
}

/** Loads an uploaded dump into `dest`; a dump that fails leaves no file. */
function loadDump(
  deps: ContentBuilderPorts,
  dumpId: string,
  dest: string,
  maxBytes: number,
  key: DatabaseKey | undefined,
): void {
  let text: string;
  try {
    text = deps.dumps.text(dumpId);
  } catch (e) {
    // Used by another create that finished first, or expired since it was checked.
    if ((e as NodeJS.ErrnoException).code === "ENOENT") {
      throw hostingErrors.dumpUsedUp();
    }
    throw e;
  }
  try {
    importDump(text, dest, maxBytes > 0 ? Math.floor(maxBytes / 4096) : 0, key);
  } catch (e) {
    if (e instanceof DumpError) throw hostingErrors.dumpFailed(e.message);
    throw e;
  }
}

/**
 * Builds a new database's primary file at `dest` (which must not exist) from its plan: empty, a
 * copy, a dump, an empty file waiting for an upload, or a schema database's schema. Connections
 * opened here are closed before it returns, and on failure nothing is left at `dest`.
 */
async function buildContent(
  deps: ContentBuilderPorts,
  location: string,
  id: string,
  plan: ContentPlan,
  maxBytes: number,
): Promise<BuiltContent> {
  const dest = deps.files.path(location, id);
  mkdirSync(path.dirname(dest), { recursive: true });
  try {
    const built = await build(deps, location, id, plan, dest, maxBytes);
    await flushClosing();
    const bytes = fileBytes(dest);
    if (maxBytes > 0 && bytes > maxBytes) {
      throw hostingErrors.seedTooLarge(bytes, maxBytes);
    }
    return built;
  } catch (e) {
    await flushClosing();
    deps.files.remove(location, id);
    throw e;
  }
}

async function build(
  deps: ContentBuilderPorts,
  location: string,
  id: string,
  plan: ContentPlan,
  dest: string,
  maxBytes: number,
): Promise<BuiltContent> {
  const { seed } = plan;
  if (plan.schemaParent) {
    const parent = plan.schemaParent;
    // The journal position first: a change committed meanwhile is in the schema copied, or after it.
    const schemaSeq = schemaJournal(deps, parent).lastSeq();
    const hosted = deps.hosted.at(deps.files.path(parent.primary_location, parent.id));
    const conn = hosted.checkout();
    let objects: ReturnType<typeof readSchema>;
    try {
      objects = readSchema(conn);
    } finally {
      hosted.checkin(conn);
    }
    createWithSchema(dest, objects);
    // That connection must be closed before the file changes journal mode.
    await flushClosing();
    finishDatabaseFile(dest);
    return { schemaId: parent.id, schemaSeq };
  }
  const key = plan.encryption?.key;
  if (seed?.type === "database") {
    const source = plan.source!;
    try {
      if (plan.encryption?.fromPlain)
        return await copyEncrypted(deps, source, dest, seed.at, plan.encryption.key);
      return copyDatabase(deps, source, dest, seed.at, key);
    } catch (e) {
      // Deleted between the checks and the copy: as if it had never been there.
      if (!deps.files.exists(source.primary_location, source.id)) {
        throw hostingErrors.sourceDeleted(source.name);
      }
      throw e;
    }
  }
  if (seed?.type === "dump") {
    loadDump(deps, plan.dumpId!, dest, maxBytes, key);
    return {};
  }
  deps.files.create(location, id, key);
  return seed?.type === "database_upload" ? { awaitingUpload: true } : {};
}
