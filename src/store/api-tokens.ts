import { guardUnique } from "./dialect.js";
import type { Executor } from "./executor.js";
import type { ApiTokenRow } from "./schema.js";

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

export function apiTokensRepo(ex: Executor) {
  const { db } = ex;
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

    listForUser: (userId: string) =>
      db
        .selectFrom("api_tokens")
        .select(["id", "name", "org_id", "group_id", "scopes", "created_at"])
        .where("user_id", "=", userId)
        .orderBy("created_at")
        .orderBy("name")
        .execute(),

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
