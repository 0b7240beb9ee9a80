import { createReadStream } from "node:fs";
import type { ServerResponse } from "node:http";
import { Readable } from "node:stream";
import type { DataAccess } from "../domain/data-access/open.js";
import { decryptFile } from "../engine/encryption/file-cipher.js";
import { pageCipherFor } from "../engine/encryption/page-cipher.js";
import type { HostedDatabases } from "../engine/hosted-databases.js";
import { FRAME_BYTES } from "../engine/wal.js";
import { ProtocolError } from "./hrana/errors.js";
import { errorBody, send } from "./http-io.js";

/** Frames served per request at most (the libSQL client asks for 128 at a time). */
const MAX_FRAMES = 1024;

export interface SyncServices {
  hosted: HostedDatabases;
  /** Told where a location's replica stands, from the frames it asks for. */
  observe(dbId: string, location: string, index: number): void;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const bytes = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { "content-type": "application/json", "content-length": bytes.length });
  res.end(bytes);
}

/** `GET .../info`: the generation a new replica starts from. */
export function syncInfo(res: ServerResponse, access: DataAccess, s: SyncServices): void {
  json(res, 200, { current_generation: s.hosted.at(access.path).frameLog.generation });
}

/**
 * `GET .../export/{g}`: the database file as it was when generation `g` began, which is the file
 * itself as long as `g` is current (only generation changes checkpoint). A connection is held open
 * meanwhile, so SQLite can't checkpoint on close while the file is read.
 */
export async function syncExport(
  res: ServerResponse,
  access: DataAccess,
  generation: number,
  s: SyncServices,
): Promise<void> {
  // An encrypted database's replica copies the stored bytes without the key: hold the file
  // without a connection (opening one needs the key).
  const encrypted = access.database.encryption_cipher !== null;
  const db = s.hosted.at(access.path);
  const conn = encrypted ? undefined : db.checkout();
  const release = encrypted ? db.hold() : undefined;
  try {
    await db.whileExporting(async () => {
      const current = db.frameLog.generation;
      if (generation !== current) {
        // An older generation's starting image is not kept: start from the current one.
        json(res, 400, { generation: current });
        return;
      }
      // An app's embedded replica gets the plain pages (its key holder asked, as on Turso).
      const source = access.key
        ? Readable.from(decryptFile(access.path, pageCipherFor(access.key)))
        : createReadStream(access.path);
      await new Promise<void>((resolve, reject) => {
        res.writeHead(200, { "content-type": "application/octet-stream" });
        source.on("error", (e: Error) => {
          res.destroy();
          reject(e);
        });
        // A client that leaves early unpipes the file, which would then stay open: close it.
        res.on("close", () => {
          source.destroy();
          resolve();
        });
        source.pipe(res);
      });
    });
  } finally {
    if (conn) db.checkin(conn);
    release?.();
  }
}

/**
 * `GET .../sync/{g}/{start}/{end}`: committed WAL frames `start`..`end - 1` of generation `g`.
 * Past the last one, a 400 with the latest generation: the same generation means "caught up", a
 * later one "finish this one and move on".
 */
export function syncFrames(
  res: ServerResponse,
  access: DataAccess,
  g: number,
  start: number,
  end: number,
  s: SyncServices,
): void {
  if (!(start >= 1 && end > start)) throw new ProtocolError("invalid frame range");
  const db = s.hosted.at(access.path);
  const log = db.frameLog;
  // Where each of this node's replicas' syncs in progress stops.
  const horizons = db.syncHorizons;
  const read = log.read(g, start, Math.min(end, start + MAX_FRAMES));
  const rep = access.replicaOf;
  const replica = rep === undefined ? undefined : `${access.database.id}/${rep}`;
  if (rep !== undefined && replica !== undefined) {
    // Asking for frames from `start` means the replica applied everything before it.
    const index = log.indexAt(g, start - 1);
    if (index !== undefined) s.observe(access.database.id, rep, index);
    // The read brought the log's position up to date.
    const limit = horizons.limit(replica, g, log.position());
    if (limit !== undefined && start > limit) {
      // Everything up to where the primary stood when this sync began: this sync is done.
      horizons.end(replica);
      caughtUp(res, g, limit);
      return;
    }
    if (limit !== undefined && read.kind === "frames")
      read.data = read.data.subarray(0, Math.min(read.data.length, (limit - start + 1) * FRAME_BYTES));
  }
  if (read.kind === "frames" && access.key && access.replicaOf === undefined) {
    // Page images decrypted for the key holder's replica; frame headers (checksums) as stored.
    const data = Buffer.from(read.data);
    pageCipherFor(access.key).decryptFrames(data, FRAME_BYTES - 24);
    read.data = data;
  }
  if (read.kind === "frames") {
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": read.data.length });
    res.end(read.data);
    return;
  }
  if (read.kind === "past-end") {
    if (replica !== undefined) horizons.end(replica);
    caughtUp(res, read.latest, log.position().frame);
    return;
  }
  const message = `generation ${g} is no longer available; delete the local replica and sync it again`;
  send(res, 410, errorBody("GENERATION_GONE", message, { generation: read.latest }), "application/json");
}

/**
 * Past the last frame: libSQL's client reads `generation` (the same one it asked for means
 * "caught up", a later one "finish this one and move on"); @tursodatabase/sync's older protocol
 * reads the same answer as a status, "checkpoint_needed", with the latest generation's last frame.
 */
function caughtUp(res: ServerResponse, generation: number, lastFrame: number): void {
  json(res, 400, { status: "checkpoint_needed", generation, max_frame_no: lastFrame, baton: null });
}

export { FRAME_BYTES };
