import type Database from "libsql";
import type { StatementInfo } from "./sql-lexer.js";
import { pragmaOf, withEmptyBlobs } from "./sql-tokens.js";

/** What SQLite's compiled program says about a statement. */
export interface ProgramFacts {
  /** sqlite3_stmt_readonly: false for anything that writes, even BEGIN IMMEDIATE. */
  readonly: boolean;
  /** Whether a loop steps through a whole table or index, so rows read come from SQLite's scan counter. */
  scans: boolean;
  /**
   * Whether the program's work is bounded by the size of its statement and arguments: it has no
   * loop and no opcode or function whose cost grows with the data (see `isUnbounded`). Such a
   * statement may run on the event loop; any other runs on the driver's thread pool, where it can
   * be interrupted.
   */
  bounded: boolean;
}

/** PRAGMAs whose EXPLAIN listing the driver can't read (see programFacts). */
const CHECK_PRAGMAS = new Set(["integrity_check", "quick_check"]);
/** SQLITE_STMTSTATUS_FULLSCAN_STEP: the counter a full-scan loop's Next/Prev bumps (its P5). */
const FULLSCAN_STEP = 1;
/** Opcodes that make a program a writer even without a write transaction (see resolveP2Values). */
const WRITING_OPCODES = new Set(["Checkpoint", "Vacuum", "JournalMode"]);
/**
 * Opcodes that loop or whose one execution does work proportional to the data: stepping a cursor
 * or a sorter, coroutines and subroutines (how SQLite runs subqueries, VALUES lists and CTEs),
 * triggers and virtual tables, counting or clearing whole b-trees, nested SQL (ALTER TABLE), and
 * the maintenance opcodes.
 */
const UNBOUNDED_OPCODES = new Set([
  "Next",
  "Prev",
  "SorterNext",
  "SorterSort",
  "Sort",
  "VNext",
  "VFilter",
  "VUpdate",
  "Yield",
  "Gosub",
  "Program",
  "RowSetRead",
  "RowSetTest",
  "Count",
  "Clear",
  "Destroy",
  "SqlExec",
  "IntegrityCk",
  "Vacuum",
  "IncrVacuum",
  "Checkpoint",
  "JournalMode",
  "ParseSchema",
]);
/** Functions whose result can be far larger than their arguments, so their cost is the caller's to choose. */
const GROWING_FUNCTIONS =
  /^(randomblob|zeroblob|printf|format|replace|hex|unhex|quote|concat|concat_ws|char)\(/i;

/**
 * Reads a statement's facts from its bytecode (`EXPLAIN <sql>`), with SQLite's own rules:
 * `resolveP2Values` in vdbeaux.c sets readOnly from the same opcodes, and wherecode.c marks
 * full-scan loops with P5 = FULLSCAN_STEP.
 *
 * The driver exposes neither flag itself. The other way to read them, the `sqlite_stmt` table,
 * builds a row for every statement the connection has not finalized on each query, and the
 * driver finalizes only at garbage collection: asking it once per prepare made a batch of n
 * distinct statements cost O(n^2).
 *
 * An EXPLAIN statement runs nothing, so it is read-only and scans nothing whatever it explains.
 * `onDropped` is handed the helper statement, which the caller is done with once this returns.
 */
export function programFacts(
  db: Database.Database,
  info: StatementInfo,
  onDropped: (helper: object) => void,
): ProgramFacts {
  if (info.isExplain) return { readonly: true, scans: false, bounded: true };
  // libsql's driver aborts the process reading these programs' listing when the database has an
  // FTS5 table (a P4 that isn't UTF-8): they only read, and their work grows with the database.
  if (CHECK_PRAGMAS.has(pragmaOf(info.sql)?.name ?? ""))
    return { readonly: true, scans: false, bounded: false };
  let ops: unknown[][];
  try {
    const explain = db.prepare(`EXPLAIN ${withEmptyBlobs(info.sql)}`).raw(true);
    onDropped(explain);
    ops = explain.all() as unknown[][];
    try {
      // The driver may leave an EXPLAIN "in progress" after its last row (see resetExplain).
      explain.get();
    } catch {
      // Nothing was left running.
    }
  } catch {
    // The statement itself compiled; should its listing not, assume the worst: a writer.
    return { readonly: false, scans: false, bounded: false };
  }
  let readonly = true;
  let scans = false;
  let bounded = true;
  for (const op of ops) {
    const [addr, opcode, , p2, , p4, p5] = op as [number, string, number, number, number, unknown, number];
    if ((opcode === "Transaction" && p2 !== 0) || WRITING_OPCODES.has(opcode)) readonly = false;
    else if ((opcode === "Next" || opcode === "Prev") && p5 === FULLSCAN_STEP) scans = true;
    if (bounded && isUnbounded(addr, opcode, p2, p4, ops.length)) bounded = false;
  }
  return { readonly, scans, bounded };
}

/**
 * Whether one instruction makes a program's work unbounded. Every program ends with a jump back
 * to its start (the `Init` trampoline: `Goto 1` as its last instruction); any other backward jump
 * is a loop.
 */
function isUnbounded(addr: number, opcode: string, p2: number, p4: unknown, length: number): boolean {
  if (UNBOUNDED_OPCODES.has(opcode)) return true;
  if (opcode === "Goto") return p2 <= addr && !(p2 === 1 && addr === length - 1);
  if (opcode === "Function" || opcode === "PureFunc") return GROWING_FUNCTIONS.test(String(p4));
  return false;
}
