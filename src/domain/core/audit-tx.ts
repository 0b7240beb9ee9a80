import { isoTime } from "../../lib/time.js";
import type { Repos } from "../../store/store.js";
import type { Ctx } from "./context.js";

/**
 * Writes an audit entry inside the caller's transaction, so an entry exists exactly when its change
 * does. Codes follow Turso's (db-create, group-create, org-member-add, org-set-overages, ...).
 */
export async function audit(
  r: Repos,
  ctx: Ctx,
  orgId: string,
  code: string,
  message: string,
  data: Record<string, unknown> = {},
): Promise<void> {
  await r.audit.insert({
    org_id: orgId,
    code,
    message,
    origin: ctx.origin,
    author: ctx.actor.username,
    data: JSON.stringify(data),
    created_at: isoTime(ctx.deps.clock()),
  });
}
