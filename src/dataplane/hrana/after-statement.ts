import type { DataAccess } from "../../domain/data-access/open.js";
import type { ExecResult } from "../../engine/connection.js";
import { failpoint } from "../../lib/failpoints.js";
import type { StreamServices } from "./stream-services.js";

/**
 * Counts a statement that ran towards its database's usage and metrics. It ran (and may have
 * committed): a failure here is reported and counted, never thrown into its answer. Written out
 * rather than through a callback, as it runs for every statement.
 */
export function meterStatement(
  services: Pick<StreamServices, "meter" | "afterCommitFailed">,
  db: DataAccess["database"],
  sql: string,
  result: ExecResult,
): void {
  try {
    failpoint("after-commit.usage");
    services.meter.record(
      {
        id: db.id,
        orgId: db.org_id,
        location: db.primary_location,
        encrypted: db.encryption_cipher !== null,
      },
      sql,
      result.rowsRead,
      result.rowsWritten,
      result.durationMs,
    );
  } catch (e) {
    services.afterCommitFailed("usage", db.id, e);
  }
}
