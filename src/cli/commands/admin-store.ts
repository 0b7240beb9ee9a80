import path from "node:path";
import type { Command } from "commander";
import { CliError, messageOf } from "../errors.js";
import type { Io } from "../io.js";
import { emit, renderTable } from "../output.js";
import { local } from "./context.js";

/** One table as the copy reports it. */
export interface CopiedTable {
  table: string;
  rows: number;
  checksum: string;
}

/**
 * The server's copy of a control plane, handed in by the CLI's entry (the CLI doesn't import the
 * server's layers; `shoal start` gets the server the same way).
 */
export type CopyStore = (opts: {
  dataDir: string;
  to: string;
  progress: (t: CopiedTable) => void;
}) => Promise<{ source: string; target: string; tables: CopiedTable[] }>;

/** `shoal admin store`: the control-plane store of an instance on this machine. */
export function registerAdminStore(admin: Command, io: Io, copyStore: CopyStore | undefined): void {
  const store = admin
    .command("store")
    .description(
      "The control-plane store of a stopped instance on this machine (run where its data folder is)",
    );
  store
    .command("copy")
    .description(
      "Copy the embedded control plane (control-plane.db in the data folder) into an empty PostgreSQL " +
        "database, checking every table's rows and checksum; the data folder is left as it was",
    )
    .requiredOption("--to <postgres-url>", "the PostgreSQL database to copy into (it must be empty)")
    .option("--data-dir <folder>", "the instance's data folder (default: $SHOAL_DATA_DIR, else ./data)")
    .action(
      local(async (_args, opts) => {
        if (!copyStore) throw new CliError("this build of the shoal command can't copy a store");
        const to = String(opts.to);
        if (!/^postgres(ql)?:\/\//.test(to)) {
          throw new CliError(
            `--to takes a PostgreSQL URL, not ${JSON.stringify(to)}`,
            "for example: --to postgres://shoal@db.internal/shoal",
          );
        }
        const dataDir = path.resolve(String(opts.dataDir ?? io.env.SHOAL_DATA_DIR ?? "./data"));
        // Progress goes to stderr as each table is checked, so a script reading --json is unaffected.
        const progress = (t: CopiedTable) =>
          void io.stderr.write(`copied ${t.table}: ${t.rows} rows, checksum matches\n`);
        const result = await copyStore({ dataDir, to, progress }).catch((e: unknown) => {
          throw new CliError(messageOf(e));
        });
        await emit(io.stdout, opts.json, result, () => {
          const total = result.tables.reduce((n, t) => n + t.rows, 0);
          const table = renderTable(
            ["table", "rows", "checksum"],
            result.tables.map((t) => [t.table, String(t.rows), t.checksum]),
          );
          return (
            `${table}\nCopied ${total} rows in ${result.tables.length} tables from ${result.source} to ${result.target}.\n` +
            `The data folder is unchanged. Start Shoal on PostgreSQL with the same data folder:\n\n` +
            `  SHOAL_METADATA_URL=<that URL> SHOAL_DATA_DIR=${dataDir} shoal start\n`
          );
        });
      }),
    );
}
