import type { Context } from "hono";
import { MisdirectedError } from "../errors.js";
import { HOP_BY_HOP_REQUEST, NOT_SENT_CODES } from "../lib/hop-by-hop.js";
import { REQUEST_ID_HEADER } from "../lib/request-id.js";
import { bodyText } from "./body.js";
import type { AppEnv } from "./env.js";
import { apiErrors } from "./errors.js";

/** Marks a request one node sent to another, so it is never forwarded twice. */
export const FORWARDED_HEADER = "x-shoal-forwarded-by";

// Besides the hop-by-hop headers, those fetch recomputes for the body it sends.
const DROP_REQUEST = new Set([...HOP_BY_HOP_REQUEST, "host", "content-length"]);
/** Failures that happen before the request reaches the holder: nothing can have changed there. */
const NOT_SENT = new Set([...NOT_SENT_CODES, "UND_ERR_CONNECT_TIMEOUT"]);
const DROP_RESPONSE = new Set([
  "connection",
  "keep-alive",
  "content-length",
  "transfer-encoding",
  "content-encoding",
]);

/** Whether a failed request may be sent on to the node that holds the files it needs. */
export function forwardable(err: unknown, c: Context<AppEnv>, selfId: string): err is MisdirectedError {
  return (
    err instanceof MisdirectedError &&
    err.holder !== undefined &&
    err.holder.id !== selfId &&
    c.req.header(FORWARDED_HEADER) === undefined
  );
}

/**
 * Sends a management call on to the node holding the locations whose database files it creates or
 * removes, and answers with that node's response, so any node of a deployment answers the whole
 * API. Safe because the refusal came before anything was committed here. The caller's own
 * Authorization goes along: every node checks API tokens against the same store.
 */
export async function forwardToHolder(
  c: Context<AppEnv>,
  err: MisdirectedError & { holder: { id: string; url: string } },
  selfId: string,
): Promise<Response> {
  const incoming = new URL(c.req.url);
  const target = new URL(`${incoming.pathname}${incoming.search}`, err.holder.url);
  const incomingHeaders = c.req.header();
  // Headers the client named in Connection are hop-by-hop too.
  const listed = new Set(
    (incomingHeaders.connection ?? "")
      .split(",")
      .map((h) => h.trim().toLowerCase())
      .filter((h) => h !== ""),
  );
  const headers = new Headers();
  for (const [name, value] of Object.entries(incomingHeaders)) {
    const lower = name.toLowerCase();
    if (!DROP_REQUEST.has(lower) && !listed.has(lower)) headers.set(name, value);
  }
  headers.set(FORWARDED_HEADER, selfId);
  // The holder logs the request under the id this node gave it (and answers with it).
  headers.set(REQUEST_ID_HEADER, c.get("requestId"));
  // The address the caller used, for answers that name it (dump URLs).
  if (incomingHeaders.host) headers.set("x-forwarded-host", incomingHeaders.host);
  const method = c.req.method;
  const body = method === "GET" || method === "HEAD" ? undefined : await bodyText(c);
  let answer: Response;
  try {
    answer = await fetch(target, { method, headers, body: body || undefined, redirect: "manual" });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.message ?? (e as Error).message;
    // fetch itself refuses some ports ("bad port") before connecting.
    if ((cause?.code !== undefined && NOT_SENT.has(cause.code)) || why === "bad port") {
      throw apiErrors.holderUnreachable(err.holder.id, err.holder.url, why);
    }
    throw apiErrors.holderFailed(err.holder.id, err.holder.url, why);
  }
  const out = new Headers();
  answer.headers.forEach((value, name) => {
    if (!DROP_RESPONSE.has(name)) out.set(name, value);
  });
  out.set("x-shoal-served-by", err.holder.id);
  return new Response(await answer.arrayBuffer(), { status: answer.status, headers: out });
}
