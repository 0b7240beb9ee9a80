import { echoable } from "../../lib/loggable-path.js";
import type { TokenListing } from "../../store/api-tokens.js";
import { requireGroup, requireOrgAccess } from "../core/access-tx.js";
import { audit } from "../core/audit-tx.js";
import type { Principal } from "../core/context.js";
import { checkTokenName } from "../core/names.js";
import { expandScopes } from "../core/roles.js";
import { insertApiToken, UNRESTRICTED } from "./account-tx.js";
import type { MintedToken } from "./api-token-auth.js";
import { accountErrors } from "./errors.js";
import type { AccountCtx } from "./ports.js";
import type { ApiTokenInfo } from "./views.js";

/** The optional body of a token mint: no body is an unrestricted token (Turso deprecates those). */
export interface TokenScopeInput {
  /** Slug of the organization the token is limited to. */
  organization?: string;
  /** Group (of that organization) the token is limited to; needs `scopes`. */
  group?: string;
  scopes?: readonly string[];
}

/**
 * `POST /v1/auth/api-tokens/{name}` (and the CLI's v2 form): a new token for the caller, limited
 * to an organization or to one group with scopes. A token can't mint a broader one than itself: a
 * group-scoped token mints nothing, an organization-scoped one only tokens of its organization.
 */
export async function createApiToken(
  ctx: AccountCtx,
  name: string,
  input: TokenScopeInput = {},
): Promise<MintedToken> {
  checkTokenName(name);
  const { actor } = ctx;
  if (actor.groupId !== null) throw accountErrors.groupTokenCannotMint();
  if (input.group && !input.organization) {
    throw accountErrors.groupTokenNeedsOrganization();
  }
  if (input.scopes && !input.group) {
    throw accountErrors.scopesNeedGroup();
  }
  if (input.group && (!input.scopes || input.scopes.length === 0)) {
    throw accountErrors.groupTokenNeedsScope();
  }
  const scopes = input.scopes ? expandScopes(input.scopes) : null;
  if (actor.orgId !== null && !input.organization) {
    throw accountErrors.organizationTokenMintsOwnOnly();
  }
  return ctx.deps.store.write(async (r) => {
    let restriction = UNRESTRICTED;
    let auditOrg = (await r.organizations.findBySlug(actor.username))?.id;
    if (input.organization) {
      if (input.group) {
        const { org, group } = await requireGroup(r, actor, input.organization, input.group, "read");
        const { role } = await requireOrgAccess(r, actor, input.organization, "read");
        if (role !== "owner" && role !== "admin") {
          throw accountErrors.onlyAdminsMintGroupTokens();
        }
        restriction = { orgId: org.id, groupId: group.id, scopes };
        auditOrg = org.id;
      } else {
        const { org } = await requireOrgAccess(r, actor, input.organization, "read");
        restriction = { orgId: org.id, groupId: null, scopes: null };
        auditOrg = org.id;
      }
    }
    const minted = await insertApiToken(r, ctx.deps, actor.userId, name, undefined, restriction);
    if (auditOrg) {
      await audit(r, ctx, auditOrg, "user-token-create", `API token ${name} created`, {
        name,
        ...(input.organization ? { organization: input.organization } : {}),
        ...(input.group ? { group: input.group, scopes } : {}),
      });
    }
    return minted;
  });
}

function toTokenInfo(t: TokenListing, withOwner: boolean): ApiTokenInfo {
  return {
    id: t.id,
    name: t.name,
    organization: t.org_slug,
    group: t.group_name,
    scopes: t.scopes ? (JSON.parse(t.scopes) as string[]) : null,
    createdAt: t.created_at,
    owner: withOwner ? { username: t.username, email: t.email } : null,
  };
}

/**
 * The caller's tokens. A restricted token sees only what it could revoke: a group-scoped one
 * itself, an organization-scoped one the tokens of its organization.
 */
export async function listApiTokens(ctx: AccountCtx): Promise<ApiTokenInfo[]> {
  const rows = await ctx.deps.store.read((r) => r.apiTokens.listForUser(ctx.actor.userId));
  return rows.filter((t) => withinReach(ctx.actor, t)).map((t) => toTokenInfo(t, false));
}

/** Whether a restricted caller may see or revoke one of its user's tokens. */
function withinReach(actor: Principal, t: { id: string; org_id: string | null }): boolean {
  if (actor.groupId !== null) return t.id === actor.tokenId;
  if (actor.orgId !== null) return t.org_id === actor.orgId;
  return true;
}

/**
 * `GET /v1/organizations/{org}/api-tokens`: tokens restricted to the organization. Owners and
 * admins see every member's, with the owner; others see their own. Unrestricted tokens aren't
 * listed: they belong to no organization.
 */
export async function listOrganizationTokens(ctx: AccountCtx, slug: string): Promise<ApiTokenInfo[]> {
  return ctx.deps.store.read(async (r) => {
    const { org, role } = await requireOrgAccess(r, ctx.actor, slug, "read");
    const all = role === "owner" || role === "admin";
    const rows = await r.apiTokens.listForOrg(org.id, all ? undefined : ctx.actor.userId);
    // A group-scoped token sees the tokens of its group only.
    const group = ctx.actor.groupId;
    return rows.filter((t) => group === null || t.group_id === group).map((t) => toTokenInfo(t, all));
  });
}

/**
 * `DELETE /v1/organizations/{org}/api-tokens/{id}`: revokes a token restricted to the organization.
 * A token of another organization, an unrestricted one, and (for members) another member's all
 * answer 404, so ids can't be probed.
 */
export async function revokeOrganizationToken(ctx: AccountCtx, slug: string, tokenId: string): Promise<void> {
  await ctx.deps.store.write(async (r) => {
    const { org, role } = await requireOrgAccess(r, ctx.actor, slug, "tokens:revoke");
    const token = await r.apiTokens.findById(tokenId);
    const mayRevoke =
      token !== undefined &&
      token.org_id === org.id &&
      (role === "owner" || role === "admin" || token.user_id === ctx.actor.userId);
    if (!mayRevoke) throw accountErrors.tokenNotFound(tokenId);
    await r.apiTokens.deleteById(tokenId);
    await audit(r, ctx, org.id, "user-token-delete", `API token ${token.name} revoked`, {
      name: token.name,
      id: tokenId,
    });
  });
}

/** Deletes the caller's token by name; the next request made with it is refused. */
export async function revokeApiToken(ctx: AccountCtx, name: string): Promise<void> {
  const { actor } = ctx;
  await ctx.deps.store.write(async (r) => {
    const token = (await r.apiTokens.listForUser(actor.userId)).find((t) => t.name === name);
    if (!token) throw accountErrors.tokenNotFound(echoable(name));
    if (!withinReach(actor, token)) {
      throw accountErrors.restrictedTokenRevokesOwnOnly();
    }
    if (actor.isAdmin && token.org_id === null && token.group_id === null) {
      // As for /v1/auth/invalidate: an instance with no administrator credential can't be run.
      await r.users.lockAdmins();
      if ((await r.users.countAdminTokens()) <= 1) {
        throw accountErrors.lastAdminToken(name);
      }
    }
    if (!(await r.apiTokens.deleteByName(actor.userId, name))) {
      throw accountErrors.tokenNotFound(echoable(name));
    }
    const personal = await r.organizations.findBySlug(ctx.actor.username);
    if (personal)
      await audit(r, ctx, personal.id, "user-token-delete", `API token ${name} revoked`, { name });
  });
}
