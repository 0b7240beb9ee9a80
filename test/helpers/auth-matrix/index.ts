/**
 * How each management route is protected. Every route registered in the app must appear here; the
 * auth-matrix test fails when one is missing, so a new route can't ship without security tests.
 * Entries live in one file per area so work on different areas doesn't collide.
 */
import { accountsMatrix } from "./accounts.js";
import { adminMatrix } from "./admin.js";
import { billingMatrix } from "./billing.js";
import { databasesMatrix } from "./databases.js";
import { groupsMatrix } from "./groups.js";
import { jwksMatrix } from "./jwks.js";
import type { MatrixEntry } from "./types.js";
import { v3Matrix } from "./v3.js";

export type { Fixture, Kind, MatrixEntry } from "./types.js";

export const AUTH_MATRIX: Record<string, MatrixEntry> = {
  ...accountsMatrix,
  ...groupsMatrix,
  ...databasesMatrix,
  ...adminMatrix,
  ...billingMatrix,
  ...v3Matrix,
  ...jwksMatrix,
};
