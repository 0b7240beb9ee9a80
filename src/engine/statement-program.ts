import type Database from "libsql";
import type { StatementInfo } from "./sql-lexer.js";
import { withEmptyBlobs } from "./sql-tokens.js";

/** What SQLite's compiled program says about a statement. */
export interface ProgramFacts {
  /** sqlite3_stmt_readonly: false for anything that writes, even BEGIN IMMEDIATE. */
  readonly: boolean;
  /** Whether a loop steps through a whole table or index, so rows read come from SQLite's scan counter. */
  scans: boolean;
}

/** SQLITE_STMTSTATUS_FULLSCAN_STEP: the counter a full-scan loop's Next/Prev bumps (its P5). */
const FULLSCAN_STEP = 1;
/** Opcodes that make a program a writer even without a write transaction (see resolveP2Values). */
const WRITING_OPCODES = new Set(["Checkpoint", "Vacuum", "JournalMode"]);

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
 * `onDropped` is told about the helper statement left for the garbage collector.
 */
export function programFacts(
  db: Database.Database,
  info: StatementInfo,
  onDropped: () => void,
): ProgramFacts {
  if (info.isExplain) return { readonly: true, scans: false };
  let ops: unknown[][];
  try {
    const explain = db.prepare(`EXPLAIN ${withEmptyBlobs(info.sql)}`).raw(true);
    onDropped();
    ops = explain.all() as unknown[][];
    try {
      // The driver may leave an EXPLAIN "in progress" after its last row (see resetExplain).
      explain.get();
    } catch {
      // Nothing was left running.
    }
  } catch {
    // The statement itself compiled; should its listing not, assume the worst: a writer.
    return { readonly: false, scans: false };
  }
  let readonly = true;
  let scans = false;
  for (const op of ops) {
    const [, opcode, , p2, , , p5] = op as [number, string, number, number, number, unknown, number];
    if ((opcode === "Transaction" && p2 !== 0) || WRITING_OPCODES.has(opcode)) readonly = false;
    else if ((opcode === "Next" || opcode === "Prev") && p5 === FULLSCAN_STEP) scans = true;
  }
  return { readonly, scans };
}
