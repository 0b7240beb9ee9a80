import type { DatabaseForDataPlane } from "../../store/databases.js";

export type DatabaseLocator = { label: string } | { orgSlug: string; name: string } | { id: string };

/** A database as the data plane sees it: placement, settings, generations, and its group's locations. */
export type DataPlaneDatabase = DatabaseForDataPlane & {
  locations: string[];
  /** Ids (`jti`) of this database's and its group's tokens revoked one by one, not yet expired. */
  revokedTokens: ReadonlySet<string>;
};
