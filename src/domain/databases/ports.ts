import type { DatabaseWithPlacement } from "../../store/databases.js";

/** A validated seed: where a new database's first content comes from. */
export type Seed =
  /** A copy of another database of the organization, now or (`at`, ms) as it was then. */
  | { type: "database"; source: string; at?: number }
  | { type: "dump"; url: string }
  /** No content until a SQLite file is uploaded through the data plane. */
  | { type: "database_upload" };

/** What a built seed adds to the new database's row. */
export interface SeedFacts {
  parentId?: string;
  branchedAt?: string;
}

/** What a new database starts from, resolved and checked before anything is built. */
export interface ContentPlan {
  seed: Seed | undefined;
  /** The database copied by a `database` seed. */
  source?: DatabaseWithPlacement;
  /** The schema database a child follows. */
  schemaParent?: DatabaseWithPlacement;
  dumpId?: string;
}

/** The row facts of a built database beyond its name and placement. */
export interface BuiltContent extends SeedFacts {
  schemaId?: string;
  schemaSeq?: number;
  awaitingUpload?: boolean;
}
