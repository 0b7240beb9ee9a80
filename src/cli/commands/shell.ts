import { open } from "node:fs/promises";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import type { Command } from "commander";
import { historyPath } from "../config-file.js";
import { openDatabase } from "../database.js";
import { CliError } from "../errors.js";
import type { Io } from "../io.js";
import { Feeder, type Item } from "../shell/feeder.js";
import { MODES, type Mode } from "../shell/format.js";
import { interactive } from "../shell/interactive.js";
import { Shell } from "../shell/runner.js";
import { remote } from "./context.js";

/** Shell input read line by line from a pipe or a file, as statements and dot-commands. */
async function* itemsOf(input: Readable): AsyncGenerator<Item> {
  const feeder = new Feeder();
  for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
    yield* feeder.push(line);
  }
  yield* feeder.finish();
}

function* itemsOfText(text: string): Generator<Item> {
  const feeder = new Feeder();
  for (const line of text.split(/\r?\n/)) yield* feeder.push(line);
  yield* feeder.finish();
}

export function registerShell(db: Command, io: Io): void {
  db.command("shell")
    .description(
      "Run SQL: interactively on a terminal, or the given SQL, a --file, or what is piped in (stops at the first error)",
    )
    .argument("<name>", "the database")
    .argument("[sql]", 'SQL to run instead of reading input, e.g. "SELECT * FROM notes"')
    .option("--file <path>", "run the SQL and dot-commands in this file")
    .option("--mode <mode>", `output: ${MODES.join(", ")} (--json is the same as --mode json)`)
    .action(
      remote(io, async (s, [name, sql], opts) => {
        const mode = (opts.json ? "json" : (opts.mode ?? "table")) as Mode;
        if (!MODES.includes(mode))
          throw new CliError(`unknown mode ${mode}`, `use one of: ${MODES.join(", ")}`);
        const shell = new Shell(await openDatabase(s, String(name)), io.stdout, mode);
        try {
          if (sql !== undefined) await shell.runScript(itemsOfText(String(sql)));
          else if (opts.file) await shell.runScript(itemsOf(await openFile(String(opts.file))));
          else if (io.stdin.isTTY) await interactive(shell, io, historyPath(s.configFile));
          else await shell.runScript(itemsOf(io.stdin));
        } finally {
          await shell.close();
        }
      }),
    );
}

/** Opens a file to read, failing with a message that names it. */
export async function openFile(file: string): Promise<Readable> {
  try {
    return (await open(file)).createReadStream({ encoding: "utf8" });
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}
