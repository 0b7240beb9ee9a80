import { requireOrgAccess } from "../core/access-tx.js";
import type { GroupCtx } from "./ports.js";

/** `GET /v2/organizations/{org}/locations`: the catalogue by platform, for members of the organization. */
export async function listLocationsByPlatform(
  ctx: GroupCtx,
  slug: string,
): Promise<Record<string, Record<string, string>>> {
  await ctx.deps.store.read((r) => requireOrgAccess(r, ctx.actor, slug, "read"));
  return ctx.deps.catalogue.byPlatform();
}
