import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { COMPANIONS, type InstanceFiles } from "./instance-files.js";

const ID = /^[0-9a-f-]{36}$/;

/**
 * The files of deleted databases kept restorable: a primary's file with its companions (WAL,
 * frame log and its history) moved, whole and unchanged, from `<locations>/<location>/` into
 * `<data>/deleted/`, named by the database's id. Moving is a rename on one file system, so a
 * delete or a restore costs nothing whatever the size, and an encrypted database stays encrypted.
 * Outside the locations folder, the start-up reconciliation never takes them for orphans.
 */
export class KeptFiles {
  private readonly dir: string;

  constructor(private readonly files: Pick<InstanceFiles, "path" | "root">) {
    this.dir = path.join(files.root, "..", "deleted");
  }

  path(dbId: string): string {
    if (!ID.test(dbId)) throw new Error(`not a database id: ${dbId}`);
    return path.join(this.dir, `${dbId}.db`);
  }

  /** Moves a primary's files aside. Its connections must be closed (see HostedDatabases.remove). */
  keep(location: string, dbId: string): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const from = this.files.path(location, dbId);
    const to = this.path(dbId);
    for (const suffix of COMPANIONS) if (existsSync(from + suffix)) renameSync(from + suffix, to + suffix);
  }

  /** Moves kept files back as the primary in `location`; refuses to overwrite an instance there. */
  restore(location: string, dbId: string): void {
    const from = this.path(dbId);
    const to = this.files.path(location, dbId);
    if (!existsSync(from)) throw new Error(`no kept files for database ${dbId}`);
    if (existsSync(to)) throw new Error(`database ${dbId} already has a file in ${location}`);
    mkdirSync(path.dirname(to), { recursive: true, mode: 0o700 });
    for (const suffix of COMPANIONS) if (existsSync(from + suffix)) renameSync(from + suffix, to + suffix);
  }

  has(dbId: string): boolean {
    return existsSync(this.path(dbId));
  }

  /** Bytes a kept database takes: its file and WAL (as storage quotas count a live one). */
  sizeOf(dbId: string): number {
    let total = 0;
    for (const suffix of ["", "-wal"]) {
      try {
        total += statSync(this.path(dbId) + suffix).size;
      } catch {
        // Checkpointed, or not kept.
      }
    }
    return total;
  }

  /** Removes a kept database's files for good (missing ones are fine). */
  drop(dbId: string): void {
    const file = this.path(dbId);
    for (const suffix of COMPANIONS) rmSync(file + suffix, { force: true, recursive: true });
  }

  /** Ids of every database with files kept here. */
  ids(): string[] {
    try {
      return [
        ...new Set(
          readdirSync(this.dir)
            .map((f) => /^([0-9a-f-]{36})\.db/.exec(f)?.[1])
            .filter((id): id is string => id !== undefined),
        ),
      ];
    } catch {
      return [];
    }
  }
}
