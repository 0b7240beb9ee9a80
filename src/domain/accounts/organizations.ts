import { UniqueViolationError } from "../../errors.js";
import { decodeStringCursor, type Page, type PageRequest, pageOf } from "../../lib/cursor.js";
import { newUuid } from "../../lib/ids.js";
import { isoTime } from "../../lib/time.js";
import { requireFilesHere } from "../cluster/placement-tx.js";
import { requireOrgAccess } from "../core/access-tx.js";
import { audit } from "../core/audit-tx.js";
import { coreErrors } from "../core/errors.js";
import { instancesOfOrganization } from "../core/instances-tx.js";
import { checkAccountName, slugify } from "../core/names.js";
import { DEFAULT_PLAN } from "../plans/plans.js";
import { accountErrors } from "./errors.js";
import type { AccountCtx } from "./ports.js";
import { type Organization, toOrganization } from "./views.js";

/**
 * Organizations the caller belongs to, by slug (only the token's own one for an org-scoped token);
 * with `limit`, one page at a time.
 */
export async function listOrganizations(
  ctx: AccountCtx,
  page: PageRequest = {},
): Promise<Page<Organization>> {
  const after = decodeStringCursor(page.cursor);
  const rows = await ctx.deps.store.read((r) =>
    r.organizations.listForUser(ctx.actor.userId, {
      orgId: ctx.actor.orgId ?? undefined,
      after,
      limit: page.limit === undefined ? undefined : page.limit + 1,
    }),
  );
  const out = pageOf(rows, page.limit, (o) => o.slug);
  return { items: out.items.map(toOrganization), next: out.next };
}

/** One organization; unknown and foreign ones are both "not found", so slugs can't be probed. */
export async function getOrganization(ctx: AccountCtx, slug: string): Promise<Organization> {
  return ctx.deps.store.read(async (r) => {
    const org = await r.organizations.findBySlug(slug);
    const member = org ? await r.members.find(org.id, ctx.actor.userId) : undefined;
    if (!org || !member || (ctx.actor.orgId !== null && ctx.actor.orgId !== org.id)) {
      throw coreErrors.organizationNotFound();
    }
    // Past membership, a refusal (a token's missing scope) is a 403 like everywhere else.
    return toOrganization((await requireOrgAccess(r, ctx.actor, slug, "read")).org);
  });
}

/**
 * `POST /v1/organizations`: a team organization owned by the caller. Its slug comes from the name.
 * With `dryRun` the checks run and nothing is written.
 */
export async function createOrganization(
  ctx: AccountCtx,
  input: { name: string; dryRun?: boolean },
): Promise<Organization> {
  const name = input.name.trim();
  if (name === "" || name.length > 64) throw accountErrors.organizationNameLength();
  const slug = slugify(name);
  checkAccountName("organization slug", slug);
  if (ctx.actor.orgId !== null) throw accountErrors.organizationTokenCannotCreate();
  const now = isoTime(ctx.deps.clock());
  const row = {
    id: newUuid(),
    slug,
    name,
    type: "team" as const,
    overages: 0,
    blocked_reads: 0,
    blocked_writes: 0,
    created_at: now,
    plan: DEFAULT_PLAN,
    database_count: 0,
    group_count: 0,
    restore_enabled: 1,
  };
  const taken = () => accountErrors.organizationExists(slug);
  if (input.dryRun) {
    if (await ctx.deps.store.read((r) => r.organizations.findBySlug(slug))) throw taken();
    return toOrganization(row);
  }
  return ctx.deps.store.write(async (r) => {
    try {
      await r.organizations.insert(row);
    } catch (e) {
      if (e instanceof UniqueViolationError) throw taken();
      throw e;
    }
    await r.members.insert({ org_id: row.id, user_id: ctx.actor.userId, role: "owner", created_at: now });
    await audit(r, ctx, row.id, "org-create", `organization ${slug} created`, { slug, name });
    return toOrganization(row);
  });
}

/**
 * `DELETE /v1/organizations/{org}`: owner only, team organizations only (a personal organization
 * goes with its user). Removes every group and database of the organization.
 */
export async function deleteOrganization(ctx: AccountCtx, slug: string): Promise<Organization> {
  const { org, instances, keptIds } = await ctx.deps.store.write(async (r) => {
    const { org } = await requireOrgAccess(r, ctx.actor, slug, "org:delete");
    if (org.type === "personal") throw accountErrors.personalOrganizationKept();
    // Locked before listing: a group or database transferred out meanwhile must not have its
    // files removed with this organization's.
    await r.organizations.lockAll([org.id]);
    await r.groups.lockAllOf(org.id);
    const instances = await instancesOfOrganization(r, org.id);
    // Deleted databases kept restorable go with the organization (their rows by cascade).
    const kept = await r.deletedDatabases.list(org.id);
    await requireFilesHere(r, ctx.deps, [
      ...instances.map((i) => i.location),
      ...kept.map((d) => d.primary_location),
    ]);
    await r.organizations.delete(org.id);
    const personal = await r.organizations.findBySlug(ctx.actor.username);
    if (personal) await audit(r, ctx, personal.id, "org-delete", `organization ${slug} deleted`, { slug });
    return { org, instances, keptIds: kept.map((d) => d.id) };
  });
  await ctx.deps.instances.remove(instances);
  for (const id of keptIds) ctx.deps.instances.dropKept(id);
  return toOrganization(org);
}
