import { isSchemaChange } from "../schema-changes.js";

/**
 * The schema changes of a schema database's open transaction, passed on to its followers once it
 * commits. Savepoints are minded: a change undone by ROLLBACK TO must not reach them (it would
 * fail its check on every child).
 */
export class SchemaChangeLog {
  private ddl: string[] = [];
  /** Savepoints of the open transaction, with how many schema changes preceded each. */
  private savepoints: Array<{ name: string; ddl: number }> = [];

  /** Records a statement that ran in the transaction. */
  track(sql: string): void {
    const savepoint = /^savepoint\s+("?)([^";\s]+)\1/i.exec(sql);
    if (savepoint) {
      this.savepoints.push({ name: savepoint[2]!.toLowerCase(), ddl: this.ddl.length });
      return;
    }
    const undo = /^rollback(?:\s+transaction)?\s+to\s+(?:savepoint\s+)?("?)([^";\s]+)\1/i.exec(sql);
    const release = /^release\s+(?:savepoint\s+)?("?)([^";\s]+)\1/i.exec(sql);
    const named = (undo ?? release)?.[2]?.toLowerCase();
    if (named !== undefined) {
      const at = this.savepoints.map((s) => s.name).lastIndexOf(named);
      if (at < 0) return;
      if (undo) {
        this.ddl.length = this.savepoints[at]!.ddl;
        this.savepoints.length = at + 1;
      } else {
        this.savepoints.length = at;
      }
      return;
    }
    if (isSchemaChange(sql)) this.ddl.push(sql);
  }

  /** The transaction ended: the changes it made (to pass on if it committed), and a clean slate. */
  take(): string[] {
    const statements = this.ddl;
    this.ddl = [];
    this.savepoints = [];
    return statements;
  }
}
