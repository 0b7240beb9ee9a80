import type { DatabaseRow, OrganizationRow } from "../../store/schema.js";

/** Whether the organization's deleted databases are kept restorable (the setting, and its own switch). */
export function keepsDeleted(deps: { deletedRetentionMs: number }, org: OrganizationRow): boolean {
  return deps.deletedRetentionMs > 0 && org.restore_enabled === 1;
}

/** A kept record's row, as it was when the database was deleted. */
export function keptRow(record: string): DatabaseRow {
  return JSON.parse(record) as DatabaseRow;
}
