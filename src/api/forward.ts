import type { Context } from "hono";
import { MisdirectedError, UnavailableError } from "../errors.js";
import type { AppEnv } from "./env.js";

/** Marks a request one node sent to another, so it is never forwarded twice. */
export const FORWARDED_HEADER = "x-shoal-forwarded-by";

// Hop-by-hop headers, and those fetch recomputes for the body it sends or receives.
const DROP_REQUEST = new Set(["host", "connection", "keep-alive", "content-length", "transfer-encoding"]);
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
  const headers = new Headers();
  for (const [name, value] of Object.entries(c.req.header())) {
    if (!DROP_REQUEST.has(name.toLowerCase())) headers.set(name, value);
  }
  headers.set(FORWARDED_HEADER, selfId);
  const method = c.req.method;
  const body = method === "GET" || method === "HEAD" ? undefined : await c.req.text();
  let answer: Response;
  try {
    answer = await fetch(target, { method, headers, body: body || undefined, redirect: "manual" });
  } catch (e) {
    throw new UnavailableError(
      `node ${err.holder.id}, which holds the files this request needs, can't be reached at ${err.holder.url}: ${(e as Error).message}`,
    );
  }
  const out = new Headers();
  answer.headers.forEach((value, name) => {
    if (!DROP_RESPONSE.has(name)) out.set(name, value);
  });
  out.set("x-shoal-served-by", err.holder.id);
  return new Response(await answer.arrayBuffer(), { status: answer.status, headers: out });
}
