import type { Executor } from "./executor.js";
import type { ApiTokenRow } from "./schema.js";
import { guardUnique } from "./unique.js";

export interface TokenOwner {
  token_id: string;
  token_name: string;
  org_id: string | null;
  group_id: string | null;
  scopes: string | null;
  user_id: string;
  username: string;
  is_admin: number;
}

/** A token as lists show it: never its hash. */
export interface TokenListing {
  id: string;
  name: string;
  org_id: string | null;
  org_slug: string | null;
  group_id: string | null;
  group_name: string | null;
  scopes: string | null;
  created_at: string;
  user_id: string;
  username: string;
  email: string;
}

export function apiTokensRepo(ex: Executor) {
  const { db } = ex;
  const listing = () =>
    db
      .selectFrom("api_tokens as t")
      .innerJoin("users as u", "u.id", "t.user_id")
      .leftJoin("organizations as o", "o.id", "t.org_id")
      .leftJoin("groups as g", "g.id", "t.group_id")
      .select([
        "t.id",
        "t.name",
        "t.org_id",
        "o.slug as org_slug",
        "t.group_id",
        "g.name as group_name",
        "t.scopes",
        "t.created_at",
        "u.id as user_id",
        "u.username",
        "u.email",
      ]);
  return {
    insert: (row: ApiTokenRow) =>
      guardUnique(ex, "token name", () => db.insertInto("api_tokens").values(row).execute()),

    /** The token with this hash and its owner, read fresh on every request so revocation is immediate. */
    findByHash: (hash: string): Promise<TokenOwner | undefined> =>
      db
        .selectFrom("api_tokens as t")
        .innerJoin("users as u", "u.id", "t.user_id")
        .select([
          "t.id as token_id",
          "t.name as token_name",
          "t.org_id",
          "t.group_id",
          "t.scopes",
          "u.id as user_id",
          "u.username",
          "u.is_admin",
        ])
        .where("t.token_hash", "=", hash)
        .executeTakeFirst(),

    /** A user's tokens with the names of what they are restricted to, oldest first. */
    listForUser: (userId: string): Promise<TokenListing[]> =>
      listing().where("t.user_id", "=", userId).orderBy("t.created_at").orderBy("t.name").execute(),

    /** Tokens restricted to an organization (of every member, or of one user), oldest first. */
    listForOrg: (orgId: string, userId?: string): Promise<TokenListing[]> => {
      let q = listing().where("t.org_id", "=", orgId);
      if (userId !== undefined) q = q.where("t.user_id", "=", userId);
      return q.orderBy("t.created_at").orderBy("t.name").execute();
    },

    findById: (id: string) => db.selectFrom("api_tokens").selectAll().where("id", "=", id).executeTakeFirst(),

    deleteById: (id: string) => db.deleteFrom("api_tokens").where("id", "=", id).execute(),

    /** Revokes every token restricted to a group (the group was deleted or left the organization). */
    deleteForGroup: (groupId: string) =>
      db.deleteFrom("api_tokens").where("group_id", "=", groupId).execute(),

    /** Revokes all of a user's tokens. */
    deleteForUser: (userId: string) => db.deleteFrom("api_tokens").where("user_id", "=", userId).execute(),

    deleteByName: async (userId: string, name: string) => {
      const r = await db
        .deleteFrom("api_tokens")
        .where("user_id", "=", userId)
        .where("name", "=", name)
        .executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },
  };
}

export type ApiTokensRepo = ReturnType<typeof apiTokensRepo>;
