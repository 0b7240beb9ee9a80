/** A SQLite value as the engine passes it: INTEGER as bigint, REAL as number, BLOB as bytes. */
export type SqlValue = null | bigint | number | string | Uint8Array;
/** Positional arguments, or named ones keyed by name without its `:`/`@`/`$` prefix. */
export type SqlArgs = readonly SqlValue[] | Readonly<Record<string, SqlValue>>;
