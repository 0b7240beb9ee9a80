export type DialectKind = "sqlite" | "postgres";

/** What differs between the two store dialects, kept to the smallest possible surface. */
export interface StoreDialect {
  kind: DialectKind;
  /** True when `err` is the driver's unique-constraint (or primary-key) violation. */
  isUniqueViolation(err: unknown): boolean;
  /** True when the transaction failed for a reason a retry can cure (deadlock, serialization). */
  isTransient(err: unknown): boolean;
}

export const sqliteDialect: StoreDialect = {
  kind: "sqlite",
  isUniqueViolation(err) {
    const code = (err as { code?: unknown } | null)?.code;
    return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY";
  },
  // One writer at a time, waiting on the busy timeout: nothing to retry.
  isTransient: () => false,
};

export const postgresDialect: StoreDialect = {
  kind: "postgres",
  isUniqueViolation(err) {
    return (err as { code?: unknown } | null)?.code === "23505";
  },
  isTransient(err) {
    const code = (err as { code?: unknown } | null)?.code;
    return code === "40P01" || code === "40001";
  },
};
