import { randomBytes } from "node:crypto";
import { createWriteStream, openSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import type { DataAccess } from "../domain/data-access/open.js";
import { type UploadTarget, uploadTarget } from "../domain/data-access/upload-target.js";
import { ConflictError, InvalidError, NotFoundError, UnavailableError } from "../errors.js";
import type { DataPlaneParts } from "./parts.js";

/** Bytes per chunk of a multipart upload (the client sends chunks of exactly this size). */
const CHUNK_BYTES = 8 * 1024 * 1024;
/** An upload untouched this long is dropped with its partial file. */
const IDLE_MS = 60 * 60_000;

interface Session {
  id: string;
  target: UploadTarget;
  size: number;
  chunks: number;
  received: Set<number>;
  /** Requests writing into the file now; the session can't be replaced meanwhile. */
  busy: number;
  /** Set from the moment finalizing starts: the file is being checked and installed. */
  installing: boolean;
  touched: number;
}

const START = /^\/v2\/upload\/start$/;
const CHUNK = /^\/v2\/upload\/(?:([A-Za-z0-9_-]+)\/)?chunk\/(\d+)$/;
const FINALIZE = /^\/v2\/upload\/(?:([A-Za-z0-9_-]+)\/)?finalize$/;

/** Whether a data-plane request uploads a database's file (see DatabaseUploads). */
export function isUploadRequest(method: string, path: string): boolean {
  if (method === "POST") return path === "/v1/upload";
  return method === "PUT" && (START.test(path) || CHUNK.test(path) || FINALIZE.test(path));
}

/**
 * Uploads of whole SQLite files into databases created with the `database_upload` seed, the two
 * ways Turso's clients send them to the database's own hostname with a database token:
 * - `POST /v1/upload` with the file as the body (Turso's documented endpoint, for curl);
 * - the turso CLI's resumable flow: `PUT /v2/upload/start` `{db_size_bytes}` answers
 *   `{chunk_size, upload_id}`, then `PUT /v2/upload/{id}/chunk/{n}` with each chunk (retried
 *   chunks overwrite themselves), then `PUT /v2/upload/{id}/finalize`. Older CLIs leave the id out.
 * The file is assembled beside the primary, checked, and installed only when complete (see
 * hosting/upload-installer.ts); a database takes one upload at a time.
 */
export class DatabaseUploads {
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly deps: DataPlaneParts) {}

  async handle(req: IncomingMessage, res: ServerResponse, path: string, access: DataAccess): Promise<void> {
    this.sweep();
    const target = uploadTarget(access);
    if (req.method === "POST") return this.single(req, res, target);
    if (START.test(path)) return this.start(req, res, target);
    const chunk = CHUNK.exec(path);
    if (chunk) return this.chunk(req, res, this.session(target, chunk[1]), Number(chunk[2]));
    const finalize = FINALIZE.exec(path);
    return this.finalize(res, this.session(target, finalize?.[1]));
  }

  private async single(req: IncomingMessage, res: ServerResponse, target: UploadTarget): Promise<void> {
    const declared = req.headers["content-length"];
    if (declared !== undefined && Number(declared) > target.maxBytes)
      throw tooLarge(Number(declared), target);
    const session = this.open(target, 0, 0);
    session.busy++;
    try {
      await receive(req, target.tempPath, "w", 0, target.maxBytes);
    } catch (e) {
      this.drop(session);
      throw e;
    } finally {
      session.busy--;
    }
    await this.install(res, session);
  }

  private async start(req: IncomingMessage, res: ServerResponse, target: UploadTarget): Promise<void> {
    const body = await readJson(req);
    const size = body.db_size_bytes;
    if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 4096 || size % 4096 !== 0) {
      throw new InvalidError(
        "db_size_bytes must be the size of the SQLite file: a whole number of 4096-byte pages",
      );
    }
    if (size > target.maxBytes) throw tooLarge(size, target);
    const session = this.open(target, size, Math.ceil(size / CHUNK_BYTES));
    writeFileSync(target.tempPath, "");
    truncateSync(target.tempPath, size);
    json(res, { chunk_size: CHUNK_BYTES, upload_id: session.id });
  }

  private async chunk(req: IncomingMessage, res: ServerResponse, s: Session, n: number): Promise<void> {
    if (n >= s.chunks)
      throw new InvalidError(`chunk ${n} is past the end: the upload has ${s.chunks} chunks`);
    // Once finalizing, the file is checked and installed: a late (retried) chunk must not touch it.
    if (s.installing) throw new ConflictError("the upload is being finalized", "UPLOAD_BUSY");
    const expected = n === s.chunks - 1 ? s.size - n * CHUNK_BYTES : CHUNK_BYTES;
    const declared = req.headers["content-length"];
    if (declared !== undefined && Number(declared) !== expected) {
      throw new InvalidError(`chunk ${n} must be ${expected} bytes, not ${declared}`);
    }
    s.busy++;
    s.received.delete(n);
    try {
      const got = await receive(req, s.target.tempPath, "r+", n * CHUNK_BYTES, expected);
      if (got !== expected) throw new InvalidError(`chunk ${n} must be ${expected} bytes; ${got} arrived`);
    } finally {
      s.busy--;
    }
    s.received.add(n);
    s.touched = Date.now();
    json(res, {});
  }

  private async finalize(res: ServerResponse, s: Session): Promise<void> {
    const missing = [...Array(s.chunks).keys()].filter((n) => !s.received.has(n));
    if (missing.length > 0) {
      throw new InvalidError(`the upload is missing chunks ${missing.slice(0, 10).join(", ")}`);
    }
    if (s.busy > 0) throw new ConflictError("chunks of this upload are still being written", "UPLOAD_BUSY");
    await this.install(res, s);
  }

  private async install(res: ServerResponse, s: Session): Promise<void> {
    if (s.installing) throw new ConflictError("the upload is already being finalized", "UPLOAD_BUSY");
    s.installing = true;
    s.busy++;
    try {
      await this.deps.uploads.install(s.target, s.target.tempPath);
    } catch (e) {
      // Busy: the same file can be finalized again. Anything else: the upload starts over.
      if (!(e instanceof UnavailableError)) this.drop(s);
      throw e;
    } finally {
      s.busy--;
      s.installing = false;
    }
    this.sessions.delete(s.id);
    json(res, {});
  }

  /** A new upload of a database, replacing an idle earlier one. */
  private open(target: UploadTarget, size: number, chunks: number): Session {
    for (const s of this.sessions.values()) {
      if (s.target.id !== target.id) continue;
      if (s.busy > 0)
        throw new ConflictError(`another upload of database ${target.name} is in progress`, "UPLOAD_BUSY");
      this.drop(s);
    }
    const s: Session = {
      id: randomBytes(12).toString("base64url"),
      target,
      size,
      chunks,
      received: new Set(),
      busy: 0,
      installing: false,
      touched: Date.now(),
    };
    this.sessions.set(s.id, s);
    return s;
  }

  /** The upload a request continues: by id, or the database's only one (older CLIs send no id). */
  private session(target: UploadTarget, id: string | undefined): Session {
    const s =
      id === undefined
        ? [...this.sessions.values()].find((x) => x.target.id === target.id)
        : this.sessions.get(id);
    if (!s || s.target.id !== target.id) {
      throw new NotFoundError(
        "no such upload for this database: it finished, expired or never started (PUT /v2/upload/start first)",
        "UPLOAD_NOT_FOUND",
      );
    }
    // The token's view of the database is the current one.
    s.target = target;
    s.touched = Date.now();
    return s;
  }

  private drop(s: Session): void {
    this.sessions.delete(s.id);
    for (const suffix of ["", "-wal", "-shm"]) rmSync(s.target.tempPath + suffix, { force: true });
  }

  private sweep(): void {
    const now = Date.now();
    for (const s of this.sessions.values()) if (s.busy === 0 && now - s.touched > IDLE_MS) this.drop(s);
  }
}

const uploads = new WeakMap<DataPlaneParts, DatabaseUploads>();

/** The uploads under way on this node. */
export function uploadsOf(deps: DataPlaneParts): DatabaseUploads {
  let u = uploads.get(deps);
  if (!u) {
    u = new DatabaseUploads(deps);
    uploads.set(deps, u);
  }
  return u;
}

function tooLarge(bytes: number, target: UploadTarget): InvalidError {
  return new InvalidError(
    `the database file is ${bytes} bytes, more than the ${target.maxBytes} allowed for database ${target.name}`,
    "INVALID_DATABASE_FILE",
  );
}

/** Writes a request body into `file` at `offset`, up to `max` bytes; returns how many arrived. */
async function receive(
  req: IncomingMessage,
  file: string,
  flags: "w" | "r+",
  offset: number,
  max: number,
): Promise<number> {
  let bytes = 0;
  async function* limited(source: AsyncIterable<Buffer>) {
    for await (const chunk of source) {
      bytes += chunk.length;
      if (bytes > max) throw new InvalidError(`the upload is larger than the ${max} bytes expected`);
      yield chunk;
    }
  }
  // Opened here, not by the stream: once this settles, nothing writes the file any more.
  const fd = openSync(file, flags);
  await pipeline(req, limited, createWriteStream("", { fd, start: offset }));
  return bytes;
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > 64 * 1024) throw new InvalidError("the request body is too large");
    chunks.push(c);
  }
  try {
    const body = JSON.parse(Buffer.concat(chunks).toString() || "{}") as unknown;
    if (typeof body === "object" && body !== null && !Array.isArray(body))
      return body as Record<string, unknown>;
  } catch {
    // Reported below.
  }
  throw new InvalidError('the request body must be JSON such as {"db_size_bytes": 4096}');
}

function json(res: ServerResponse, body: unknown): void {
  const bytes = Buffer.from(JSON.stringify(body));
  res.writeHead(200, { "content-type": "application/json", "content-length": bytes.length });
  res.end(bytes);
}
