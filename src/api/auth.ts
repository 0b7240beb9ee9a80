import type { Context } from "hono";
import { authenticate } from "../domain/accounts/api-token-auth.js";
import type { ApiCtx, AppEnv } from "./env.js";
import { apiErrors } from "./errors.js";

/** Reads `Authorization: Bearer <token>`; the scheme is case-insensitive, as in RFC 6750. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

/** Where a call came from, for audit entries, judged from the User-Agent like Turso does. */
function originOf(userAgent: string | undefined): string {
  if (!userAgent) return "api";
  if (userAgent.startsWith("turso-cli")) return "cli";
  if (/mozilla/i.test(userAgent)) return "web";
  return "api";
}

/**
 * Builds the request's domain context from its bearer token. With `optional`, a request without an
 * Authorization header passes anonymously; a header that is present must still be valid.
 */
export async function resolveCtx(c: Context<AppEnv>, optional: boolean): Promise<ApiCtx | undefined> {
  const header = c.req.header("authorization");
  if (header === undefined && optional) return undefined;
  if (header === undefined) throw apiErrors.missingToken();
  const token = bearerToken(header);
  if (!token) throw apiErrors.malformedAuthorization();
  const deps = c.get("deps");
  const actor = await authenticate(deps, token);
  return { deps, actor, origin: originOf(c.req.header("user-agent")) };
}
