import { UniqueViolationError } from "../errors.js";

export type DialectKind = "sqlite" | "postgres";

/** What differs between the two store dialects, kept to the smallest possible surface. */
export interface StoreDialect {
  kind: DialectKind;
  /** True when `err` is the driver's unique-constraint (or primary-key) violation. */
  isUniqueViolation(err: unknown): boolean;
}

export const sqliteDialect: StoreDialect = {
  kind: "sqlite",
  isUniqueViolation(err) {
    const code = (err as { code?: unknown } | null)?.code;
    return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY";
  },
};

export const postgresDialect: StoreDialect = {
  kind: "postgres",
  isUniqueViolation(err) {
    return (err as { code?: unknown } | null)?.code === "23505";
  },
};

/**
 * Runs an insert or update and turns a unique violation into `UniqueViolationError(label)`. The
 * label names the rule (for instance "database name"), so the domain can word the conflict.
 */
export async function guardUnique<T>(d: StoreDialect, label: string, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (e) {
    if (d.isUniqueViolation(e)) throw new UniqueViolationError(label);
    throw e;
  }
}
