import type { IncomingMessage, ServerResponse } from "node:http";
import { setImmediate as yieldToLoop } from "node:timers/promises";
import { corsHeaders } from "./cors.js";
import { PipelineAnswer } from "./hrana/answer-text.js";
import type { HranaCode } from "./hrana/error-codes.js";
import { ProtocolError } from "./hrana/errors.js";
import { writePieces } from "./hrana/json-pieces.js";
import type { ResponseBudget } from "./hrana/response-budget.js";

/** Largest request body accepted (a pipeline, a batch); sqld's default is the same order. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** How much of a body past the limit is read and dropped before answering 413 (see readBody). */
const DRAIN_BYTES = 256 * 1024 * 1024;
/** How long writing an answer's lines runs before other requests get a turn. */
const SLICE_MS = 4;
/** Writes of a large answer, in characters: the socket's buffer holds about one at a time. */
const CHUNK_CHARS = 64 * 1024;

export function send(res: ServerResponse, status: number, body: string, contentType: string): void {
  const headers: Record<string, string | number> = {
    "content-type": contentType,
    "content-length": Buffer.byteLength(body),
  };
  // Most requests come from servers, with no Origin: no spread of an empty object for them.
  if (res.req.headers.origin !== undefined) Object.assign(headers, corsHeaders(res.req));
  res.writeHead(status, headers);
  // A string, not its bytes: node writes the head and a string body in one piece, where a
  // Buffer would cost an encoding into a new buffer first.
  res.end(body);
}

/**
 * The body of every data-plane error answered over HTTP. `@libsql/client` surfaces the code only
 * when the content type is exactly `application/json` and the body has `message`; `error` is there
 * too, as sqld and Turso send it. `extra`: fields a protocol adds (a sync answer's `generation`).
 */
export function errorBody(code: HranaCode, message: string, extra?: Record<string, unknown>): string {
  return JSON.stringify({ error: message, message, code, ...extra });
}

/** Sends an error at the HTTP level; what a thrown error becomes is decided in `httpErrorOf`. */
export function sendError(res: ServerResponse, status: number, code: HranaCode, message: string): void {
  send(res, status, errorBody(code, message), "application/json");
}

/**
 * Sends a JSON answer whose rows were counted in `budget`. A small one goes in one piece with
 * its length. A large one is encoded and written a chunk at a time, each write waiting until the
 * client has taken the last (backpressure): a slow reader holds its rows and one chunk, never
 * the whole encoded answer, and encoding gives other requests a turn every few milliseconds.
 * The budget is settled once the answer is out or the client is gone.
 */
export async function sendJson(
  res: ServerResponse,
  value: unknown,
  budget: ResponseBudget,
  contentType = "application/json",
  lines?: Iterable<unknown>,
): Promise<void> {
  if (budget.small) {
    // A small answer was never counted against the total (see response-budget.ts).
    budget.settle();
    const body = lines
      ? `${[...lines].map((l) => JSON.stringify(l)).join("\n")}\n`
      : value instanceof PipelineAnswer
        ? value.text()
        : JSON.stringify(value);
    send(res, 200, body, contentType);
    return;
  }
  res.once("close", () => budget.settle());
  res.writeHead(200, { "content-type": contentType, ...corsHeaders(res.req) });
  const write = (chunk: string) => (res.write(chunk) || res.destroyed ? undefined : drained(res));
  let rest = "";
  if (lines) {
    // Lines are small: gather them into chunks, and give other requests a turn every few
    // milliseconds (a cursor over a 4,000-step batch is some 12,000 lines).
    let slice = performance.now();
    for (const line of lines) {
      rest += await writePieces(line, CHUNK_CHARS, write);
      rest += "\n";
      if (res.destroyed) return;
      if (rest.length >= CHUNK_CHARS) {
        const waiting = write(rest);
        rest = "";
        if (waiting) await waiting;
      }
      if (performance.now() - slice > SLICE_MS) {
        await yieldToLoop();
        slice = performance.now();
      }
    }
  } else {
    rest = await writePieces(value, CHUNK_CHARS, write);
  }
  if (!res.destroyed) res.end(rest);
}

/** Resolves once the response can take more (or is gone): backpressure for a slow reader. */
export function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

/** A request body past MAX_BODY_BYTES, answered 413 in the data plane's error shape. */
export class BodyTooLargeError extends Error {
  constructor() {
    super(`the request body is larger than ${MAX_BODY_BYTES} bytes, the most the data plane reads`);
  }
}

/** A request body that didn't arrive in time, answered 408: a slow sender holds no more than its socket. */
export class BodyTimeoutError extends Error {
  constructor(ms: number) {
    super(`the request body did not arrive within ${ms} ms (SHOAL_BODY_TIMEOUT_MS)`);
  }
}

/**
 * Reads a request body of at most MAX_BODY_BYTES within `timeoutMs`. Past the size nothing more
 * is kept, but the rest is still read (and dropped) before the 413 goes out: a client still
 * sending when the server answers and closes gets its connection reset instead of the answer.
 * Only past DRAIN_BYTES more does the server stop listening and answer at once.
 */
export function readBody(req: IncomingMessage, timeoutMs: number): Promise<string> {
  return readBodyBytes(req, timeoutMs).then((b) => b.toString());
}

/**
 * `readBody`'s bytes, undecoded (a body sent on to another process as it came). It looks a
 * microtask later, once the bytes that came with the request's head have been parsed: a small
 * body has then usually arrived whole and is taken as it is, without listeners or a timer.
 */
export function readBodyBytes(req: IncomingMessage, timeoutMs: number): Promise<Buffer> {
  return Promise.resolve().then(() => (arrived(req) ? arrivedBody(req) : awaitBody(req, timeoutMs)));
}

/** Whether the whole body is already buffered: all the bytes its length declares (or it ended). */
function arrived(req: IncomingMessage): boolean {
  if (req.complete) return true;
  const declared = req.headers["content-length"];
  return declared !== undefined && req.readableLength >= Number(declared);
}

function arrivedBody(req: IncomingMessage): Buffer {
  const body = req.read() as Buffer | null;
  if (body !== null && body.length > MAX_BODY_BYTES) throw new BodyTooLargeError();
  return body ?? Buffer.alloc(0);
}

function awaitBody(req: IncomingMessage, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let dropped = 0;
    const fail = (e: Error) => {
      clearTimeout(timer);
      req.removeAllListeners("data");
      req.resume();
      reject(e);
    };
    const timer = setTimeout(() => fail(new BodyTimeoutError(timeoutMs)), timeoutMs);
    timer.unref();
    const declared = Number(req.headers["content-length"] ?? 0);
    if (declared > MAX_BODY_BYTES + DRAIN_BYTES) {
      fail(new BodyTooLargeError());
      return;
    }
    req.on("data", (c: Buffer) => {
      if (dropped > 0 || size + c.length > MAX_BODY_BYTES) {
        if (dropped === 0) chunks.length = 0;
        dropped += c.length;
        if (dropped > DRAIN_BYTES) fail(new BodyTooLargeError());
        return;
      }
      size += c.length;
      chunks.push(c);
    });
    req.on("end", () => {
      clearTimeout(timer);
      if (dropped > 0) reject(new BodyTooLargeError());
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    });
    req.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

export async function readJson(bodyText: Promise<string>): Promise<Record<string, unknown>> {
  let body: unknown;
  try {
    body = JSON.parse(await bodyText);
  } catch (e) {
    if (e instanceof ProtocolError || e instanceof BodyTooLargeError || e instanceof BodyTimeoutError)
      throw e;
    throw new ProtocolError("the request body is not valid JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ProtocolError("the request body must be a JSON object");
  }
  return body as Record<string, unknown>;
}
