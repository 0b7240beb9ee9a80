import { open, stat } from "node:fs/promises";
import type { Command } from "commander";
import { getDatabase, openDatabase } from "../database.js";
import { CliError } from "../errors.js";
import type { Io } from "../io.js";
import { emit } from "../output.js";
import type { Session } from "../session.js";
import { isSqliteFile, uploadDatabaseFile, uploadDump } from "../upload.js";
import { remote } from "./context.js";
import { groupFor } from "./group-choice.js";

const taken = (name: string) => ({
  409: `database ${name} already exists: import into a new name, or run SQL in it with \`shoal db shell ${name} --file <file>\``,
});

/** A SQLite file that still has a -wal beside it would arrive without its latest commits. */
async function requireCheckpointed(file: string): Promise<void> {
  const wal = await stat(`${file}-wal`).catch(() => undefined);
  if (wal && wal.size > 0) {
    throw new CliError(
      `${file} has unsaved changes in ${file}-wal`,
      `checkpoint it first: sqlite3 ${file} "PRAGMA wal_checkpoint(TRUNCATE)"`,
    );
  }
}

async function importSqliteFile(
  s: Session,
  name: string,
  group: string,
  file: string,
  io: Io,
): Promise<void> {
  await requireCheckpointed(file);
  const handle = await open(file);
  try {
    const { size } = await handle.stat();
    await s.api.call("POST", await s.orgPath("/databases"), {
      body: { name, group, seed: { type: "database_upload" } },
      hints: taken(name),
    });
    try {
      await uploadDatabaseFile(await openDatabase(s, name), handle, size, io.stderr);
    } catch (e) {
      // Nothing is left behind: the database made to receive the file goes again.
      await s.api.call("DELETE", await s.orgPath(`/databases/${encodeURIComponent(name)}`)).catch(() => {});
      throw e;
    }
  } finally {
    await handle.close();
  }
}

export function registerImport(db: Command, io: Io): void {
  db.command("import")
    .description("Create a database from a SQLite file or a SQL dump (told apart by their content)")
    .argument("<name>", "the new database")
    .argument("<file>", "a SQLite database file, or SQL text such as `shoal db dump` writes")
    .option("--group <group>", "the group to create it in (default: `default`, or the only group)")
    .option(
      "--location <code>",
      "location of the `default` group if this creates it; else one the group must have",
    )
    .action(
      remote(io, async (s, [rawName, file], opts) => {
        const name = String(rawName);
        const path = String(file);
        const group = await groupFor(
          s,
          opts.group as string | undefined,
          opts.location as string | undefined,
        );
        const { sqlite, size } = await importFile(s, io, { name, group: group.name, path });
        const d = await getDatabase(s, name);
        await emit(
          io.stdout,
          opts.json,
          d,
          () =>
            `Imported ${path} (${sqlite ? "SQLite file" : "SQL dump"}, ${size} bytes) into new database ${name}.\nURL: ${d.http_url}\n`,
        );
      }),
    );
}

/**
 * Creates database `name` in `group` from the file at `path`: a SQLite file is uploaded, anything
 * else is run as a SQL dump. `expect` refuses the other kind (`db create --from-file|--from-dump`).
 */
export async function importFile(
  s: Session,
  io: Io,
  target: { name: string; group: string; path: string; expect?: "sqlite" | "dump" },
): Promise<{ sqlite: boolean; size: number }> {
  const { name, group, path } = target;
  const handle = await open(path).catch((e: NodeJS.ErrnoException) => {
    throw new CliError(`cannot read ${path}: ${e.code ?? e.message}`);
  });
  const [sqlite, { size }] = await Promise.all([isSqliteFile(handle), handle.stat()]);
  await handle.close();
  if (target.expect === "sqlite" && !sqlite) {
    throw new CliError(`${path} is not a SQLite database file`, "for SQL text, use --from-dump");
  }
  if (target.expect === "dump" && sqlite) {
    throw new CliError(
      `${path} is a SQLite database file, not SQL text`,
      "for a database file, use --from-file",
    );
  }
  if (sqlite) await importSqliteFile(s, name, group, path, io);
  else {
    const dumpUrl = await uploadDump(s, path, size, io.stderr);
    await s.api.call("POST", await s.orgPath("/databases"), {
      body: { name, group, seed: { type: "dump", url: dumpUrl } },
      hints: { ...taken(name), 400: "fix the dump and import it again" },
    });
  }
  return { sqlite, size };
}
