import type { Context } from "hono";
import type { AppEnv } from "./env.js";
import { FORWARDED_HEADER } from "./forward.js";

/**
 * The origin the caller used to reach this service (`http://127.0.0.1:8080`), for answers that
 * hand back URLs on it. On a call another node forwarded, the caller's address is in
 * X-Forwarded-Host (see forward.ts).
 */
export function callerOrigin(c: Context<AppEnv>): string {
  const url = new URL(c.req.url);
  const forwardedHost = c.req.header(FORWARDED_HEADER) && c.req.header("x-forwarded-host");
  return forwardedHost ? `${url.protocol}//${forwardedHost}` : url.origin;
}
