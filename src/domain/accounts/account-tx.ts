import { UniqueViolationError } from "../../errors.js";
import { newUuid } from "../../lib/ids.js";
import { hashToken } from "../../lib/secrets.js";
import type { Clock } from "../../lib/time.js";
import { isoTime } from "../../lib/time.js";
import type { Repos } from "../../store/store.js";
import { audit } from "../core/audit-tx.js";
import { checkAccountName, checkEmail } from "../core/names.js";
import type { Role, Scope } from "../core/roles.js";
import { type MintedToken, newApiTokenValue } from "./api-token-auth.js";
import { accountErrors } from "./errors.js";
import type { AccountCtx, AccountPorts } from "./ports.js";
import { type Member, toUser, type User } from "./views.js";

/** What a token is limited to: nothing (every organization of its user), an organization, or a group. */
export interface TokenRestriction {
  orgId: string | null;
  groupId: string | null;
  scopes: readonly Scope[] | null;
}

export const UNRESTRICTED: TokenRestriction = { orgId: null, groupId: null, scopes: null };

/**
 * Stores a token for a user inside the caller's transaction; only its hash is kept. `value` lets
 * the bootstrap store a token it generated (or the operator chose) before committing.
 */
export async function insertApiToken(
  r: Repos,
  deps: Pick<AccountPorts, "apiTokenKey" | "clock">,
  userId: string,
  name: string,
  value?: { id: string; token: string },
  restriction: TokenRestriction = UNRESTRICTED,
): Promise<MintedToken> {
  const { id, token } = value ?? (await newApiTokenValue(deps));
  const now = deps.clock();
  try {
    await r.apiTokens.insert({
      id,
      user_id: userId,
      name,
      token_hash: hashToken(token),
      org_id: restriction.orgId,
      group_id: restriction.groupId,
      scopes: restriction.scopes ? JSON.stringify(restriction.scopes) : null,
      created_at: isoTime(now),
    });
  } catch (e) {
    if (e instanceof UniqueViolationError) throw accountErrors.tokenNameTaken(name);
    throw e;
  }
  return { id, name, token };
}

export interface NewAccount {
  username: string;
  email: string;
  isAdmin: boolean;
}

/**
 * Creates a user and the personal organization every user has (slug = username, name
 * `personal`, type `personal`), with the user as its owner. Runs inside the caller's transaction.
 */
export async function insertAccount(
  r: Repos,
  deps: { clock: Clock },
  a: NewAccount,
): Promise<{ user: User; orgId: string }> {
  checkAccountName("username", a.username);
  checkEmail(a.email);
  const now = isoTime(deps.clock());
  const user = {
    id: newUuid(),
    username: a.username,
    email: a.email,
    is_admin: a.isAdmin ? 1 : 0,
    created_at: now,
  };
  const orgId = newUuid();
  try {
    await r.users.insert(user);
    await r.organizations.insert({
      id: orgId,
      slug: a.username,
      name: "personal",
      type: "personal",
      overages: 0,
      blocked_reads: 0,
      blocked_writes: 0,
      created_at: now,
    });
  } catch (e) {
    // Usernames and organization slugs share one namespace (a personal org's slug is the username).
    if (e instanceof UniqueViolationError) throw accountErrors.usernameTaken(a.username);
    throw e;
  }
  await r.members.insert({ org_id: orgId, user_id: user.id, role: "owner", created_at: now });
  return { user: toUser(user), orgId };
}

/**
 * Makes a user a member inside the caller's transaction, with its `org-member-add` audit entry;
 * shared by adding a member and accepting an invite.
 */
export async function insertMember(
  r: Repos,
  ctx: AccountCtx,
  org: { id: string; slug: string },
  user: { id: string; username: string; email: string },
  role: Role,
  data: Record<string, unknown> = {},
): Promise<Member> {
  try {
    await r.members.insert({ org_id: org.id, user_id: user.id, role, created_at: isoTime(ctx.deps.clock()) });
  } catch (e) {
    if (e instanceof UniqueViolationError) {
      throw accountErrors.alreadyMember(user.username, org.slug);
    }
    throw e;
  }
  await audit(r, ctx, org.id, "org-member-add", `${user.username} added as ${role}`, {
    username: user.username,
    role,
    ...data,
  });
  return { username: user.username, email: user.email, role };
}
