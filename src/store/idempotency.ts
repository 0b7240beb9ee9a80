import type { Executor } from "./executor.js";
import type { IdempotencyKeysTable } from "./schema.js";
import { guardUnique } from "./unique.js";

export function idempotencyRepo(ex: Executor) {
  const { db } = ex;
  return {
    find: (userId: string, key: string) =>
      db
        .selectFrom("idempotency_keys")
        .selectAll()
        .where("user_id", "=", userId)
        .where("key", "=", key)
        .executeTakeFirst(),

    /** Reserves a key; a concurrent reservation of the same key raises UniqueViolationError. */
    insert: (row: IdempotencyKeysTable) =>
      guardUnique(ex, "idempotency key", () => db.insertInto("idempotency_keys").values(row).execute()),

    complete: (userId: string, key: string, status: number, response: string) =>
      db
        .updateTable("idempotency_keys")
        .set({ status, response })
        .where("user_id", "=", userId)
        .where("key", "=", key)
        .execute(),

    delete: (userId: string, key: string) =>
      db.deleteFrom("idempotency_keys").where("user_id", "=", userId).where("key", "=", key).execute(),

    /** Forgets a user's keys reserved before `before` (ISO time). */
    deleteOlderThan: (userId: string, before: string) =>
      db
        .deleteFrom("idempotency_keys")
        .where("user_id", "=", userId)
        .where("created_at", "<", before)
        .execute(),
  };
}

export type IdempotencyRepo = ReturnType<typeof idempotencyRepo>;
