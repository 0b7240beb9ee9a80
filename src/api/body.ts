import type { IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import type { Context } from "hono";
import type { AppEnv } from "./env.js";
import { apiErrors } from "./errors.js";

/**
 * Largest JSON body the management API reads. Its bodies are a few hundred bytes (an IP allowlist
 * of thousands of blocks still fits); SQL dumps have their own route and limit.
 */
export const MAX_API_BODY_BYTES = 1024 * 1024;

/**
 * How much of a body past the limit is still read, and dropped, before answering 413: a client
 * still sending when the server answers and stops reading gets a reset instead of the answer.
 */
const DRAIN_BYTES = 256 * 1024 * 1024;

/** Refuses a body whose declared length is past the limit, before anything else is done for it. */
export function refuseDeclaredTooLarge(c: Context<AppEnv>): void {
  const declared = c.req.header("content-length");
  if (declared !== undefined && Number(declared) > MAX_API_BODY_BYTES)
    throw apiErrors.bodyTooLarge(MAX_API_BODY_BYTES);
}

/**
 * The request body as text, read at most once (an idempotent create reads it for its fingerprint
 * and again for the handler) and never past the limit: a chunked body without a length is counted
 * as it arrives, and reading stops at the first byte too many, so memory never holds more.
 */
export async function bodyText(c: Context<AppEnv>): Promise<string> {
  const cached = c.get("bodyText");
  if (cached !== undefined) return cached;
  refuseDeclaredTooLarge(c);
  const body = c.req.raw.body ?? getBody(c);
  let text = "";
  if (body) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let size = 0;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > MAX_API_BODY_BYTES) {
          text = "";
          if (size > MAX_API_BODY_BYTES + DRAIN_BYTES) break;
          continue;
        }
        text += decoder.decode(value, { stream: true });
      }
      if (size > MAX_API_BODY_BYTES) throw apiErrors.bodyTooLarge(MAX_API_BODY_BYTES);
      text += decoder.decode();
    } finally {
      await reader.cancel().catch(() => undefined);
    }
  }
  c.set("bodyText", text);
  return text;
}

/**
 * The body of a GET that has one. The fetch API can't carry it, so the node adapter leaves it on
 * the socket; the turso CLI sends one on `GET .../jwks-template`.
 */
function getBody(c: Context<AppEnv>): ReadableStream<Uint8Array> | null {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (c.req.method !== "GET" || !incoming || incoming.readableEnded) return null;
  const framed =
    incoming.headers["content-length"] !== undefined || incoming.headers["transfer-encoding"] !== undefined;
  return framed ? (Readable.toWeb(incoming) as ReadableStream<Uint8Array>) : null;
}
