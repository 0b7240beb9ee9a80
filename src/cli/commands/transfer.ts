import type { Command } from "commander";
import { openDatabase } from "../database.js";
import { copyBody, fetchFromDatabase, saveBody } from "../download.js";
import type { Io } from "../io.js";
import { emit } from "../output.js";
import { Progress } from "../progress.js";
import { remote } from "./context.js";

export function registerTransfer(db: Command, io: Io): void {
  db.command("export")
    .description("Download the database as a SQLite file (a consistent snapshot)")
    .argument("<name>")
    .option("--output <file>", "where to save it (default: <name>.db)")
    .option("--overwrite", "replace the file if it exists")
    .action(
      remote(io, async (s, [name], opts) => {
        const file = (opts.output as string | undefined) ?? `${name}.db`;
        const access = await openDatabase(s, String(name), true);
        const res = await fetchFromDatabase(access, "export");
        const bytes = await saveBody(res, file, opts.overwrite === true, io.stderr, `Exporting ${name}`);
        await emit(
          io.stdout,
          opts.json,
          { database: name, file, bytes },
          () => `Exported ${name} to ${file} (${bytes} bytes).\n`,
        );
      }),
    );

  db.command("dump")
    .description("Print the database as SQL text (sqlite3's .dump format), or save it with --output")
    .argument("<name>")
    .option("--output <file>", "save to this file instead of printing")
    .option("--overwrite", "replace the file if it exists")
    .action(
      remote(io, async (s, [name], opts) => {
        const access = await openDatabase(s, String(name), true);
        const res = await fetchFromDatabase(access, "dump");
        if (!opts.output) {
          // Standard output stays open: it isn't this command's to close.
          await copyBody(res, io.stdout, new Progress(io.stderr, `Dumping ${name}`), false);
          return;
        }
        const file = String(opts.output);
        const bytes = await saveBody(res, file, opts.overwrite === true, io.stderr, `Dumping ${name}`);
        await emit(
          io.stdout,
          opts.json,
          { database: name, file, bytes },
          () => `Dumped ${name} to ${file} (${bytes} bytes).\n`,
        );
      }),
    );
}
