import type { IncomingMessage, ServerResponse } from "node:http";
import { dataAccessErrors } from "../../domain/data-access/errors.js";
import type { DataAccess } from "../../domain/data-access/open.js";
import type { HostedDatabases } from "../../engine/hosted-databases.js";
import { PageDiff, type SyncPoint, SyncPointGone } from "../../engine/page-diff.js";
import { PAGE_SIZE } from "../../engine/wal.js";
import { ForbiddenError } from "../../errors.js";
import { corsHeaders } from "../cors.js";
import { ProtocolError } from "../hrana/errors.js";
import { drained } from "../http-io.js";
import {
  encodeHeader,
  PAGE_FRAMING_BYTES,
  type PullRequest,
  parsePullRequest,
  writePageFraming,
  ZSTD_LEVEL,
} from "./messages.js";
import { formatRevision, parseRevision } from "./revision.js";
import { loadZstd } from "./zstd.js";

export interface PullServices {
  /** The databases this node runs; a pull waits on its database's next commit there. */
  hosted: HostedDatabases;
}

/** Longest a pull waits for a change, whatever it asks: proxies rarely keep a request open longer. */
export const MAX_LONG_POLL_MS = 5 * 60_000;
const MAX_REQUEST_BYTES = 16 * 1024 * 1024;
/** Pages are sent in writes of about this size, waiting for the socket to drain in between. */
const CHUNK_BYTES = 256 * 1024;

/**
 * `POST .../pull-updates`: the pages that bring the client's copy from its revision to the
 * database's latest (or asked-for) state, read from the frame log, so a small change costs what
 * changed. With a long-poll timeout and nothing new, it waits for the next commit first.
 */
export async function pullUpdates(
  req: IncomingMessage,
  res: ServerResponse,
  access: DataAccess,
  s: PullServices,
): Promise<void> {
  const r = parsePullRequest(await readBytes(req));
  const db = access.database;
  // Pages would have to be served decrypted in Turso's reserved-bytes layout: not supported.
  if (db.encryption_cipher !== null) throw dataAccessErrors.encryptedPullUnsupported(db.name);
  if (db.block_reads === 1 || db.org_blocked_reads === 1)
    throw new ForbiddenError("Operation was blocked: reads are blocked on this database", "BLOCKED");
  // A revision of another database (or none) means the client's copy tells us nothing: send it all.
  const from = r.clientRevision ? parseRevision(db.id, r.clientRevision) : undefined;
  const to = r.serverRevision ? parseRevision(db.id, r.serverRevision) : undefined;
  if (r.serverRevision && !to)
    throw new ProtocolError(`${r.serverRevision} is not a revision of this database`, "REVISION_UNKNOWN");
  const hosted = s.hosted.at(access.path);
  const log = hosted.frameLog;
  const client = { gone: false };
  res.once("close", () => (client.gone = true));
  if (from && !to && r.longPollMs > 0) {
    const deadline = Date.now() + Math.min(r.longPollMs, MAX_LONG_POLL_MS);
    while (log.position().index === from.index && Date.now() < deadline && !client.gone)
      await hosted.nextCommit.wait(deadline - Date.now(), res);
    if (client.gone) return;
  }
  const zstd = r.encoding === "zstd" ? await loadZstd() : undefined;
  const compress = zstd ? (page: Buffer) => zstd.compress(page, ZSTD_LEVEL) : undefined;
  // Holding a connection keeps the pool from closing the database's last one (which checkpoints),
  // and exporting keeps commits from starting a new generation: the live WAL stays as it is.
  const conn = hosted.checkout();
  try {
    await hosted.whileExporting(async () => {
      const diff = buildDiff(log, from, to, r);
      try {
        await send(res, client, diff, formatRevision(db.id, diff.to), r.encoding, compress);
      } finally {
        diff.close();
      }
    });
  } finally {
    hosted.checkin(conn);
  }
}

function buildDiff(
  log: Parameters<typeof PageDiff.build>[0],
  from: SyncPoint | undefined,
  to: SyncPoint | undefined,
  r: PullRequest,
): PageDiff {
  try {
    const pages = r.pages;
    return PageDiff.build(log, from, to, pages ? (p) => pages.has(p) : undefined);
  } catch (e) {
    if (e instanceof SyncPointGone)
      throw new ProtocolError(`${e.message}: pull again without a server revision`, "REVISION_GONE");
    throw e;
  }
}

async function send(
  res: ServerResponse,
  client: { gone: boolean },
  diff: PageDiff,
  revision: string,
  encoding: PullRequest["encoding"],
  compress: ((page: Buffer) => Uint8Array) | undefined,
): Promise<void> {
  res.writeHead(200, { "content-type": "application/protobuf", ...corsHeaders(res.req) });
  const header = encodeHeader(revision, diff.dbPages, encoding);
  // Each chunk is a fresh buffer: the socket may still hold the previous one.
  const room = CHUNK_BYTES + 2 * (PAGE_SIZE + PAGE_FRAMING_BYTES);
  let chunk = Buffer.allocUnsafe(room);
  let at = header.copy(chunk, 0);
  const page = Buffer.allocUnsafe(PAGE_SIZE);
  for (const p of diff.pages) {
    if (compress) {
      diff.read(p, page);
      const data = compress(page);
      at = writePageFraming(chunk, at, p, data.length);
      chunk.set(data, at);
      at += data.length;
    } else {
      at = writePageFraming(chunk, at, p, PAGE_SIZE);
      diff.read(p, chunk, at);
      at += PAGE_SIZE;
    }
    if (at < CHUNK_BYTES) continue;
    const more = res.write(chunk.subarray(0, at));
    chunk = Buffer.allocUnsafe(room);
    at = 0;
    if (!more) await drained(res);
    if (client.gone) return;
  }
  res.end(chunk.subarray(0, at));
}

function readBytes(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_REQUEST_BYTES) {
        reject(
          new ProtocolError(
            `the request body is larger than ${MAX_REQUEST_BYTES} bytes`,
            "REQUEST_TOO_LARGE",
          ),
        );
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks, size)));
    req.on("error", reject);
  });
}
