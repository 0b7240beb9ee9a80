import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { apiError, unreachable } from "./api-client.js";
import { DATA_PLANE_HINTS, type DatabaseAccess } from "./database.js";
import type { Output } from "./io.js";
import { Progress } from "./progress.js";
import type { Session } from "./session.js";

/**
 * Sends a SQLite file into a database created with the `database_upload` seed, in the resumable
 * form the turso CLI uses (start, numbered chunks, finalize), so that a bar can show progress.
 */
export async function uploadDatabaseFile(
  db: DatabaseAccess,
  file: FileHandle,
  size: number,
  stderr: Output,
): Promise<void> {
  const put = async (route: string, body: string | Buffer): Promise<Record<string, unknown>> => {
    let res: Response;
    try {
      res = await fetch(`${db.url}${route}`, {
        method: "PUT",
        headers: { authorization: `Bearer ${db.token}` },
        body,
      });
    } catch (e) {
      throw unreachable(db.url, e);
    }
    const text = await res.text();
    if (!res.ok) throw apiError(res.status, text, DATA_PLANE_HINTS);
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  };
  const start = await put("v2/upload/start", JSON.stringify({ db_size_bytes: size }));
  const chunkSize = Number(start.chunk_size);
  const id = String(start.upload_id);
  const progress = new Progress(stderr, `Uploading ${db.name}`, size);
  const buffer = Buffer.alloc(chunkSize);
  for (let n = 0, offset = 0; offset < size; n++, offset += chunkSize) {
    const { bytesRead } = await file.read(buffer, 0, Math.min(chunkSize, size - offset), offset);
    await put(`v2/upload/${id}/chunk/${n}`, buffer.subarray(0, bytesRead));
    progress.add(bytesRead);
  }
  progress.finish();
  await put(`v2/upload/${id}/finalize`, "");
}

/**
 * Uploads a SQL dump to `POST .../databases/dumps` as multipart/form-data, streamed from the file
 * with a progress bar; answers the dump URL to seed a database with.
 */
export async function uploadDump(s: Session, file: string, size: number, stderr: Output): Promise<string> {
  const boundary = `shoal-${randomBytes(12).toString("hex")}`;
  const name = path.basename(file).replace(/["\r\n]/g, "_");
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/sql\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const progress = new Progress(stderr, "Uploading the dump", size);
  async function* parts(): AsyncGenerator<Buffer> {
    yield head;
    for await (const chunk of createReadStream(file)) {
      progress.add((chunk as Buffer).length);
      yield chunk as Buffer;
    }
    yield tail;
  }
  const res = await s.api.send("POST", s.api.url((await s.orgPath("/databases/dumps")).slice(1)), {
    headers: {
      "content-type": `multipart/form-data; boundary=${boundary}`,
      "content-length": String(head.length + size + tail.length),
    },
    body: Readable.toWeb(Readable.from(parts())) as ReadableStream,
    duplex: "half",
  } as RequestInit);
  const text = await res.text();
  if (!res.ok) throw apiError(res.status, text);
  progress.finish();
  return (JSON.parse(text) as { dump_url: string }).dump_url;
}

/** Whether a file is a SQLite database (by its header) rather than SQL text. */
export async function isSqliteFile(file: FileHandle): Promise<boolean> {
  const header = Buffer.alloc(16);
  const { bytesRead } = await file.read(header, 0, 16, 0);
  return bytesRead === 16 && header.toString("latin1") === "SQLite format 3\0";
}
