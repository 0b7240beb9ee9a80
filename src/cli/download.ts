import { once } from "node:events";
import { createWriteStream, existsSync } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { Readable, Transform, type Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebStream } from "node:stream/web";
import { apiError, unreachable } from "./api-client.js";
import { DATA_PLANE_HINTS, type DatabaseAccess } from "./database.js";
import { CliError } from "./errors.js";
import type { Output } from "./io.js";
import { Progress } from "./progress.js";

/** GETs one of a database's data-plane routes (`dump`, `export`) with its token. */
export async function fetchFromDatabase(db: DatabaseAccess, route: string): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(`${db.url}${route}`, { headers: { authorization: `Bearer ${db.token}` } });
  } catch (e) {
    throw unreachable(db.url, e);
  }
  if (!res.ok || !res.body) throw apiError(res.status, await res.text(), DATA_PLANE_HINTS);
  return res;
}

/** Copies an answer's body to `sink`, counting bytes on a progress bar. */
export async function copyBody(
  res: Response,
  sink: Writable,
  progress: Progress,
  end = true,
): Promise<number> {
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      progress.add(chunk.length);
      done(null, chunk);
    },
  });
  await pipeline(Readable.fromWeb(res.body as WebStream<Uint8Array>), counter, sink, { end });
  // Kept open (end: false), the sink may still hold what it was given: wait until it took it.
  if (!end && sink.writableNeedDrain) await once(sink, "drain");
  progress.finish();
  return bytes;
}

/**
 * Saves an answer's body to `file`: written beside it under another name and renamed once
 * complete, so a failed download never leaves a truncated file where the real one belongs.
 */
export async function saveBody(
  res: Response,
  file: string,
  overwrite: boolean,
  stderr: Output,
  label: string,
): Promise<number> {
  if (!overwrite && existsSync(file)) {
    throw new CliError(`${file} already exists`, "choose another --output, or add --overwrite");
  }
  const temp = `${file}.partial-${process.pid}`;
  const length = Number(res.headers.get("content-length"));
  const progress = new Progress(stderr, label, Number.isFinite(length) && length > 0 ? length : undefined);
  try {
    const bytes = await copyBody(res, createWriteStream(temp, { mode: 0o600 }), progress);
    await rename(temp, file);
    return bytes;
  } catch (e) {
    await rm(temp, { force: true });
    if (e instanceof CliError) throw e;
    throw new CliError(`could not save ${file}: ${(e as Error).message}`);
  }
}
