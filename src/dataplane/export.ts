import { randomBytes } from "node:crypto";
import { closeSync, createReadStream, fstatSync, openSync, rmSync, statSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { DataAccess } from "../domain/data-access/open.js";
import { blockingWork } from "../engine/blocking-work.js";
import { dumpDatabase } from "../engine/dump-export.js";
import { decryptFile } from "../engine/encryption/file-cipher.js";
import { type PageCipher, pageCipherFor } from "../engine/encryption/page-cipher.js";
import type { HostedDatabases } from "../engine/hosted-databases.js";
import { noteRunning } from "../engine/running-database.js";
import { exportInto } from "../engine/snapshot.js";
import { ForbiddenError } from "../errors.js";
import { drained } from "./http-io.js";

/** Dump text is sent in pieces of about this many characters. */
const CHUNK_CHARS = 64 * 1024;

/** A dump or an export reads the whole database: anyone who may read it may take one. */
function mayRead(access: DataAccess): void {
  const db = access.database;
  // Replicas' internal tokens only sync (see DataAccess.replicaOf).
  if (access.replicaOf !== undefined) throw new ForbiddenError("a replication token cannot read a dump");
  if (db.block_reads === 1 || db.org_blocked_reads === 1) {
    throw new ForbiddenError(`reads are blocked on database ${db.name}`, "BLOCKED");
  }
}

/**
 * `GET .../dump`: the database as SQL text (sqlite3's `.dump` format), as sqld serves it. It is
 * read in one read transaction, so it is a consistent snapshot, and streamed as it is produced,
 * waiting whenever the client reads slower than the dump is written.
 */
export async function serveDump(
  res: ServerResponse,
  access: DataAccess,
  hosted: HostedDatabases,
): Promise<void> {
  mayRead(access);
  const db = hosted.at(access.path);
  const conn = db.checkout(access.key);
  noteRunning(access.path);
  const lines = dumpDatabase(conn);
  try {
    // The first line comes after the snapshot is taken: a failure there is still a clean error.
    let next = lines.next();
    res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
    let piece = "";
    for (; !next.done; next = lines.next()) {
      piece += next.value;
      if (piece.length < CHUNK_CHARS) continue;
      const more = res.write(piece);
      piece = "";
      if (!more) await drained(res);
      if (res.destroyed) return;
    }
    res.end(piece);
  } finally {
    // Ends the generator's open statements; checkin rolls back the read transaction if unfinished.
    lines.return(undefined);
    db.checkin(conn);
  }
}

/**
 * `GET .../export`: the database as one SQLite file. The copy is taken with `VACUUM INTO` (one
 * read transaction, writers carry on) into a temporary file beside the database, which is
 * unlinked as soon as it is open and streamed from there: nothing is held in memory, and nothing
 * is left behind however the download ends.
 */
export async function serveExport(
  res: ServerResponse,
  access: DataAccess,
  hosted: HostedDatabases,
): Promise<void> {
  mayRead(access);
  const temp = `${access.path}.export-${randomBytes(6).toString("hex")}`;
  const db = hosted.at(access.path);
  const conn = db.checkout(access.key);
  try {
    blockingWork(() => exportInto(conn, temp));
  } finally {
    db.checkin(conn);
  }
  // From an encrypted database the copy is encrypted too; its key holder gets the plain file.
  if (access.key) return serveDecrypted(res, access, temp, pageCipherFor(access.key));
  let fd: number;
  try {
    fd = openSync(temp, "r");
  } finally {
    rmSync(temp, { force: true });
  }
  let size: number;
  try {
    size = fstatSync(fd).size;
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  res.writeHead(200, {
    "content-type": "application/vnd.sqlite3",
    "content-length": size,
    "content-disposition": `attachment; filename="${access.database.name}.db"`,
  });
  await pipeline(createReadStream("", { fd }), res);
}

/** Streams the plain pages of an encrypted copy; the copy is unlinked once open. */
async function serveDecrypted(
  res: ServerResponse,
  access: DataAccess,
  temp: string,
  cipher: PageCipher,
): Promise<void> {
  let pages: AsyncGenerator<Buffer>;
  let first: IteratorResult<Buffer>;
  let size: number;
  try {
    size = statSync(temp).size;
    pages = decryptFile(temp, cipher);
    first = await pages.next();
  } finally {
    rmSync(temp, { force: true });
  }
  res.writeHead(200, {
    "content-type": "application/vnd.sqlite3",
    "content-length": size,
    "content-disposition": `attachment; filename="${access.database.name}.db"`,
  });
  async function* all() {
    if (!first.done) yield first.value;
    yield* pages;
  }
  await pipeline(Readable.from(all()), res);
}
