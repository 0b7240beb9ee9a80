import { appendFileSync, closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync } from "node:fs";
import path from "node:path";

/** One committed schema change of a schema database, in commit order. */
export interface SchemaChange {
  seq: number;
  /** When it was committed (ms). */
  at: number;
  /** The DDL statements of the transaction, in the order they ran. */
  statements: string[];
  /** Fingerprint of the schema right after the commit (see schema-copy.ts). */
  fingerprint: string;
}

const FILE = "schema-changes.jsonl";

/**
 * The schema changes of a schema database, one JSON line each, in a file beside its frame log.
 * Children are brought forward from it, so a change committed on the parent survives a restart
 * before every child has it: an entry is appended (and flushed to disk) right after the commit, in
 * the same synchronous step, before anything else can run.
 */
export class SchemaJournal {
  private last: number | undefined;

  constructor(private readonly dir: string) {}

  append(change: Omit<SchemaChange, "seq">): SchemaChange {
    const entry = { seq: this.lastSeq() + 1, ...change };
    mkdirSync(this.dir, { recursive: true });
    const file = path.join(this.dir, FILE);
    appendFileSync(file, `${JSON.stringify(entry)}\n`);
    const fd = openSync(file, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    this.last = entry.seq;
    return entry;
  }

  lastSeq(): number {
    if (this.last === undefined) this.last = this.read().at(-1)?.seq ?? 0;
    return this.last;
  }

  /** Changes after `seq`, oldest first. */
  since(seq: number): SchemaChange[] {
    return this.read().filter((c) => c.seq > seq);
  }

  private read(): SchemaChange[] {
    const file = path.join(this.dir, FILE);
    if (!existsSync(file)) return [];
    const out: SchemaChange[] = [];
    for (const line of readFileSync(file, "utf8").split("\n")) {
      if (!line) continue;
      try {
        out.push(JSON.parse(line) as SchemaChange);
      } catch {
        // A line cut short by a crash mid-append: its transaction's answer was never sent.
      }
    }
    return out;
  }
}
