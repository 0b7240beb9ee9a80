import type { DataAccess } from "../../domain/data-access/open.js";
import type { TableRights } from "../../domain/data-access/table-permissions.js";
import type { Prepared } from "../../engine/connection.js";
import { fileLevelRefusal } from "../../engine/sql-guard.js";
import { pragmaOf } from "../../engine/sql-tokens.js";
import { setsPragma } from "../../engine/statement-info.js";
import { EVERY_TABLE, type TableUses } from "../../engine/statement-tables.js";
import { HranaError } from "./errors.js";
import { serverPathsRefusal } from "./server-paths.js";

/** A database a client may name in `ATTACH`. */
export interface AttachTarget {
  id: string;
  path: string;
  allowAttach: boolean;
}

/** Statements block_reads never stops: ending a transaction or detaching must always work. */
const NEVER_BLOCKED = new Set(["commit", "rollback", "savepoint", "attach", "detach"]);

/**
 * PRAGMAs a client may set (`PRAGMA x = v`): settings of its own session or database that can't
 * undo a guarantee the server gives every tenant. Everything else that sets or calls is refused:
 * query_only carries read-only tokens and blocked writes, max_page_count the size limit, a busy
 * timeout would freeze the shared event loop, the journal mode and checkpoints belong to the
 * server's WAL and replication, and heap limits and threads are process-wide.
 */
const SETTABLE_PRAGMAS = new Set([
  "foreign_keys",
  "defer_foreign_keys",
  "recursive_triggers",
  "ignore_check_constraints",
  "legacy_alter_table",
  "reverse_unordered_selects",
  "case_sensitive_like",
  "automatic_index",
  "cell_size_check",
  "user_version",
  "application_id",
  "analysis_limit",
]);

/** PRAGMAs a client may call with an argument (`PRAGMA x(v)`): they only read or check. */
const CALLABLE_PRAGMAS = new Set([
  "table_info",
  "table_xinfo",
  "table_list",
  "index_list",
  "index_info",
  "index_xinfo",
  "foreign_key_list",
  "foreign_key_check",
  "integrity_check",
  "quick_check",
  "optimize",
  ...SETTABLE_PRAGMAS,
]);

/** PRAGMAs that act even in their plain form: `PRAGMA wal_checkpoint` checkpoints. */
const ACTING_PRAGMAS = new Set(["wal_checkpoint", "shrink_memory"]);

/**
 * What a statement must pass before it is compiled, for this caller. Compiling applies a PRAGMA,
 * so a token limited to tables may set one (even through EXPLAIN or describe) only with
 * schema_update on every table, decided here rather than on the program.
 */
export function compileGuard(access: DataAccess): (sql: string) => void {
  const rights = access.rights;
  if (!rights) return refuseForbidden;
  return (sql) => {
    refuseForbidden(sql);
    if (setsPragma(sql) && !rights.allows(EVERY_TABLE, "schema_update"))
      throw new HranaError(
        "FORBIDDEN",
        "Authorization forbidden: the token's permissions don't allow schema_update on all tables (setting a PRAGMA)",
      );
  };
}

/**
 * Throws when a statement may never run on the server, whoever asks. It must be called before
 * the statement is even prepared: SQLite applies many PRAGMAs while compiling them.
 */
export function refuseForbidden(sql: string): void {
  const refused = forbiddenUse(sql);
  if (refused) throw unsupported(refused);
}

/** Why a statement may never run on the server, whoever asks; undefined when it may. */
export function forbiddenUse(sql: string): string | undefined {
  const fileLevel = fileLevelRefusal(sql) ?? serverPathsRefusal(sql);
  if (fileLevel) return fileLevel;
  const pragma = /^\s*(?:pragma|explain)\b|^\s*(?:--|\/\*)/i.test(sql) ? pragmaOf(sql) : undefined;
  if (pragma) {
    const { name, form } = pragma;
    if (form === "assign" && !SETTABLE_PRAGMAS.has(name)) return `PRAGMA ${name} is managed by the server`;
    if (form === "call" && !CALLABLE_PRAGMAS.has(name)) return `PRAGMA ${name} is managed by the server`;
    if (form === "read" && ACTING_PRAGMAS.has(name)) return `PRAGMA ${name} is managed by the server`;
  }
  return undefined;
}

const ATTACH =
  /^attach\s+(?:database\s+)?(?:'((?:[^']|'')*)'|"((?:[^"]|"")*)"|`([^`]*)`|\[([^\]]*)\]|([A-Za-z0-9_-]+))\s+as\s+([\s\S]+)$/i;

const blocked = (what: string) =>
  new HranaError("BLOCKED", `Operation was blocked: ${what} are blocked on this database`);
/** The organization used up its plan's quota with overages off (see domain/plans/blocking-tx.ts). */
export const orgBlocked = (what: string, org: string) =>
  new HranaError(
    "BLOCKED",
    `Operation was blocked: ${what} are blocked because organization ${org} used up its plan's quota this month; turn overages on or ask the instance administrator for a larger plan`,
  );
const unsupported = (why: string) =>
  new HranaError("SQL_PARSE_ERROR", `SQL string could not be parsed: unsupported statement: ${why}`);

/** What to run instead of the statement as prepared, when it must be rewritten. */
export type Verdict = undefined | { sql: string } | { attach: string; alias: string };

/**
 * Decides whether the caller may run a prepared statement, synchronously (it runs for every
 * statement). Throws the error the client should see when it is refused; returns how to rewrite it
 * otherwise: a session that can't write opens `BEGIN IMMEDIATE`/`EXCLUSIVE` transactions as
 * deferred ones (so `transaction("write")` works for reading with a read-only token, as on
 * sqld), and an ATTACH of a database name must be resolved to that database's file.
 */
export function authorizeStatement(p: Prepared, access: DataAccess): Verdict {
  const db = access.database;
  const { kind, sql } = p.info;
  if (db.block_reads === 1 && !NEVER_BLOCKED.has(kind)) throw blocked("reads");
  if (db.org_blocked_reads === 1 && !NEVER_BLOCKED.has(kind)) throw orgBlocked("reads", db.org_slug);
  const canWrite = access.canWrite && db.block_writes !== 1 && db.org_blocked_writes !== 1;
  if (kind === "begin") return !canWrite && !p.readonly ? { sql: "BEGIN DEFERRED" } : undefined;
  if (!p.readonly && kind !== "commit" && kind !== "rollback" && kind !== "savepoint") {
    if (db.block_writes === 1) throw blocked("writes");
    if (db.org_blocked_writes === 1) throw orgBlocked("writes", db.org_slug);
    if (!access.canWrite) {
      throw new HranaError(
        "FORBIDDEN",
        "Authorization forbidden: the token is read-only and cannot write to the database",
      );
    }
  }
  if (kind === "write" && /^vacuum\b[\s\S]*\binto\b/i.test(sql)) {
    throw unsupported("VACUUM INTO would write a file outside the database");
  }
  // Checked before preparing too (see refuseForbidden); again here for callers that prepare elsewhere.
  refuseForbidden(sql);
  if (kind === "attach") return parseAttach(sql);
  return undefined;
}

function parseAttach(sql: string): Verdict {
  const m = ATTACH.exec(sql);
  const name = m && (m[1]?.replace(/''/g, "'") ?? m[2]?.replace(/""/g, '"') ?? m[3] ?? m[4] ?? m[5]);
  if (!m || !name)
    throw unsupported("ATTACH must name a database of the organization: ATTACH 'name' AS alias");
  return { attach: name, alias: m[6]! };
}

/**
 * The SQL that attaches `name` for this caller: the database's own file, read-only through a URI,
 * whatever the token (ATTACH only ever grants reading another database).
 */
export async function attachStatement(
  name: string,
  alias: string,
  access: DataAccess,
  resolveAttach: (name: string) => Promise<AttachTarget | undefined>,
): Promise<string> {
  // The attached file would be read by this connection without its key, or this one's pages
  // reached by a statement of the caller's choosing across both: neither is offered.
  if (access.database.encryption_cipher !== null)
    throw new HranaError(
      "FORBIDDEN",
      `Authorization forbidden: ATTACH is not available on database ${access.database.name}, which is encrypted`,
    );
  const target = await resolveAttach(name);
  if (!target) throw new HranaError("SQLITE_UNKNOWN", `SQLite error: no such database: ${name}`);
  if (!target.allowAttach)
    throw new HranaError("FORBIDDEN", `Authorization forbidden: database ${name} doesn't allow attach`);
  if (!access.attachIds.has(target.id)) {
    throw new HranaError(
      "FORBIDDEN",
      `Authorization forbidden: the token does not grant ATTACH of database ${name}`,
    );
  }
  const uri = `file:${encodeURI(target.path).replace(/[?#]/g, encodeURIComponent)}?mode=ro`;
  return `ATTACH '${uri.replace(/'/g, "''")}' AS ${alias}`;
}

/**
 * `authorizeStatement`, then, for a token with table-level permissions, `authorizeTables` on what
 * the statement's program does (read from the connection it was prepared on).
 */
export function authorizeRun(
  p: Prepared,
  access: DataAccess,
  conn: { tablesOf(p: Prepared): TableUses },
): Verdict {
  const verdict = authorizeStatement(p, access);
  if (access.rights) authorizeTables(access.rights, p, () => conn.tablesOf(p));
  return verdict;
}

/**
 * Refuses a statement that does something the token's table-level permissions don't allow, judged
 * on the program SQLite compiled (`uses`, read only for such tokens): a view, a CTE or a trigger
 * can't reach a table the token may not use in that way. ATTACH would bring in tables of another
 * database, which no rule names.
 */
export function authorizeTables(rights: TableRights, p: Prepared, uses: () => TableUses): void {
  if (p.info.kind === "attach")
    throw new HranaError(
      "FORBIDDEN",
      "Authorization forbidden: the token has table-level permissions, which don't extend to ATTACH",
    );
  const refused = rights.firstRefused(uses());
  if (!refused) return;
  if ("beyond" in refused)
    throw new HranaError(
      "FORBIDDEN",
      `Authorization forbidden: the token has table-level permissions, and this statement is beyond any table rule: ${refused.beyond}`,
    );
  const where =
    refused.table === EVERY_TABLE
      ? "all tables (a virtual table such as json_each or FTS5, VACUUM, ANALYZE, REINDEX and PRAGMAs that set something can't be limited to named tables)"
      : `table ${refused.table}`;
  throw new HranaError(
    "FORBIDDEN",
    `Authorization forbidden: the token's permissions don't allow ${refused.action} on ${where}`,
  );
}
