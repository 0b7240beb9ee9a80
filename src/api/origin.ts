import type { Context } from "hono";
import type { AppEnv } from "./env.js";
import { FORWARDED_HEADER } from "./forward.js";

/** A host, with an optional port, as a proxy may name it: nothing that could end up outside a URL's host. */
const HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The origin the caller used to reach this service (`http://127.0.0.1:8080`), for answers that
 * hand back URLs on it. On a call another node forwarded, the caller's address is in
 * X-Forwarded-Host (see forward.ts). Behind one of the operator's reverse proxies
 * (`SHOAL_TRUSTED_PROXIES`), the proxy's X-Forwarded-Proto and X-Forwarded-Host say how clients
 * reached it (`https://shoal.example.com`); from anyone else those headers are ignored.
 */
export function callerOrigin(c: Context<AppEnv>): string {
  const url = new URL(c.req.url);
  const forwardedHost = c.req.header(FORWARDED_HEADER) && c.req.header("x-forwarded-host");
  if (forwardedHost) return `${url.protocol}//${forwardedHost}`;
  if (!fromTrustedProxy(c)) return url.origin;
  const proto = firstValue(c.req.header("x-forwarded-proto"))?.toLowerCase();
  const host = firstValue(c.req.header("x-forwarded-host"));
  const scheme = proto === "https" || proto === "http" ? `${proto}:` : url.protocol;
  return `${scheme}//${host && HOST.test(host) ? host : url.host}`;
}

function fromTrustedProxy(c: Context<AppEnv>): boolean {
  const proxies = c.get("proxies");
  if (!proxies) return false;
  const peer = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket
    ?.remoteAddress;
  return proxies.allows(peer);
}

/** The first of a header's comma-separated values: what the proxy nearest the client wrote. */
function firstValue(header: string | undefined): string | undefined {
  const v = header?.split(",")[0]?.trim();
  return v === "" ? undefined : v;
}
