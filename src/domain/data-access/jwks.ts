import { isoTime } from "../../lib/time.js";
import { requireDatabase, requireGroup, requireOrgAccess } from "../core/access-tx.js";
import { audit } from "../core/audit-tx.js";
import { jwksErrors } from "./errors.js";
import type { JwksCtx } from "./ports.js";
import type { TrustedKeySet } from "./provider-tokens.js";
import { parseTablePermissions } from "./table-permissions.js";

/** An organization trusts at most this many identity providers' key sets. */
export const MAX_KEY_SETS = 10;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The key sets an organization trusts, by name (`turso org jwks list`). */
export async function listJwks(ctx: JwksCtx, slug: string): Promise<TrustedKeySet[]> {
  return ctx.deps.store.read(async (r) => {
    const { org } = await requireOrgAccess(r, ctx.actor, slug, "read");
    return (await r.orgJwks.list(org.id)).map(({ name, url, issuer, audience }) => ({
      name,
      url,
      issuer,
      audience,
    }));
  });
}

/**
 * Trusts an identity provider's key set under a name, or replaces the one of that name (`turso org
 * jwks save`). The URL is fetched first: one that doesn't answer or serves no usable key is
 * refused and nothing changes. From the next request on, tokens it signs open the databases their
 * claims name (see `providerScope` in open.ts).
 */
export async function saveJwks(
  ctx: JwksCtx,
  slug: string,
  name: string,
  input: { url?: string; issuer?: string; audience?: string },
): Promise<TrustedKeySet> {
  if (!NAME.test(name)) throw jwksErrors.badName(name);
  const url = input.url?.trim();
  if (!url) throw jwksErrors.noUrl();
  const issuer = input.issuer?.trim() || null;
  const audience = input.audience?.trim() || null;
  // Rights first, so a caller who may not save can't make the server fetch a URL either.
  await ctx.deps.store.read((r) => requireOrgAccess(r, ctx.actor, slug, "org:jwks"));
  await ctx.deps
    .checkJwks(url)
    .catch((e: unknown) => Promise.reject(jwksErrors.unusable((e as Error).message)));
  await ctx.deps.store.write(async (r) => {
    const { org } = await requireOrgAccess(r, ctx.actor, slug, "org:jwks");
    // Locked, so two saves at once can't both see room for one more set.
    await r.organizations.lockAll([org.id]);
    const sets = await r.orgJwks.list(org.id);
    if (!sets.some((s) => s.name === name) && sets.length >= MAX_KEY_SETS)
      throw jwksErrors.tooMany(MAX_KEY_SETS);
    await r.orgJwks.save({
      org_id: org.id,
      name,
      url,
      issuer,
      audience,
      created_at: isoTime(ctx.deps.clock()),
    });
    await audit(r, ctx, org.id, "org-jwks-save", `key set ${name} trusted`, { name, url, issuer, audience });
  });
  ctx.deps.directory.invalidate();
  return { name, url, issuer, audience };
}

/** Stops trusting a key set (`turso org jwks remove`): tokens it signed stop working. */
export async function removeJwks(ctx: JwksCtx, slug: string, name: string): Promise<void> {
  await ctx.deps.store.write(async (r) => {
    const { org } = await requireOrgAccess(r, ctx.actor, slug, "org:jwks");
    const set = (await r.orgJwks.list(org.id)).find((s) => s.name === name);
    if (!set || !(await r.orgJwks.remove(org.id, name))) throw jwksErrors.notFound(name);
    const { url, issuer, audience } = set;
    await audit(r, ctx, org.id, "org-jwks-remove", `key set ${name} no longer trusted`, {
      name,
      url,
      issuer,
      audience,
    });
  });
  ctx.deps.directory.invalidate();
}

export interface TemplateRequest {
  database?: string;
  group?: string;
  /** `full-access` (default) or `read-only`. */
  scope?: string;
  permissions?: unknown;
}

/**
 * The claims an identity provider should put in its tokens for them to open a database or a group
 * (`turso org jwks template`): `a` for the access, `id` for a database or `gid` for a group, `perm`.
 */
export async function jwksTemplate(
  ctx: JwksCtx,
  slug: string,
  req: TemplateRequest,
): Promise<Record<string, unknown>> {
  if (Boolean(req.database) === Boolean(req.group)) throw jwksErrors.templateScope();
  const scope = req.scope || "full-access";
  if (scope !== "full-access" && scope !== "read-only") throw jwksErrors.templateAccess(scope);
  const perm = parseTablePermissions(req.permissions, "permissions");
  const a = scope === "read-only" ? "ro" : "rw";
  return ctx.deps.store.read(async (r) => {
    if (req.database) {
      const { db } = await requireDatabase(r, ctx.actor, slug, req.database, "read");
      return { a, id: db.id, perm };
    }
    const { group } = await requireGroup(r, ctx.actor, slug, req.group!, "read");
    return { a, gid: group.id, perm };
  });
}
