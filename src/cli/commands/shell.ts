import { open } from "node:fs/promises";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import type { Command } from "commander";
import { configPath, historyPath } from "../config-file.js";
import { type DatabaseAccess, openDatabase } from "../database.js";
import { CliError } from "../errors.js";
import type { Io } from "../io.js";
import { openSession } from "../session.js";
import { Feeder, type Item } from "../shell/feeder.js";
import { MODES, type Mode } from "../shell/format.js";
import { interactive } from "../shell/interactive.js";
import { Shell } from "../shell/runner.js";
import { local } from "./context.js";

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
    .argument("<name|url>", "the database, or its URL (with ?authToken=... or --auth-token)")
    .argument("[sql]", 'SQL to run instead of reading input, e.g. "SELECT * FROM notes"')
    .option("--file <path>", "run the SQL and dot-commands in this file")
    .option("--mode <mode>", `output: ${MODES.join(", ")} (--json is the same as --mode json)`)
    .option("--auth-token <token>", "with a URL: the database token (default: $SHOAL_DB_TOKEN)")
    .action(
      local(async ([target, sql], opts) => {
        const mode = (opts.json ? "json" : (opts.mode ?? "table")) as Mode;
        if (!MODES.includes(mode))
          throw new CliError(`unknown mode ${mode}`, `use one of: ${MODES.join(", ")}`);
        const given = String(target);
        let db: DatabaseAccess;
        let history: string;
        if (isUrl(given)) {
          db = byUrl(given, (opts.authToken as string | undefined) ?? io.env.SHOAL_DB_TOKEN);
          history = historyPath(configPath(io.env, opts.config));
        } else {
          const s = await openSession(io, opts);
          db = await openDatabase(s, given);
          history = historyPath(s.configFile);
        }
        const shell = new Shell(db, io.stdout, mode);
        try {
          if (sql !== undefined) await shell.runScript(itemsOfText(String(sql)));
          else if (opts.file) await shell.runScript(itemsOf(await openFile(String(opts.file))));
          else if (io.stdin.isTTY) await interactive(shell, io, history);
          else await shell.runScript(itemsOf(io.stdin));
        } finally {
          await shell.close();
        }
      }),
    );
}

const URL_SCHEMES = /^(https?|libsql|wss?):\/\//i;

function isUrl(text: string): boolean {
  return URL_SCHEMES.test(text);
}

/**
 * A database reached by its URL, as the turso CLI's `db shell <url>` does: any URL a libSQL
 * client takes (`libsql://` is HTTPS, `ws(s)://` its HTTP twin), the token from `?authToken=`
 * or the caller. No login is needed.
 */
function byUrl(text: string, token: string | undefined): DatabaseAccess {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CliError(`${text} is not a URL`);
  }
  const scheme = url.protocol.toLowerCase();
  url.protocol = scheme === "http:" || scheme === "ws:" ? "http:" : "https:";
  const authToken = url.searchParams.get("authToken") ?? token;
  if (!authToken) {
    throw new CliError(
      `no token for ${url.host}`,
      "add ?authToken=<token> to the URL, --auth-token, or SHOAL_DB_TOKEN (mint one with `shoal db tokens create <db>`)",
    );
  }
  url.search = "";
  url.hash = "";
  if (!url.pathname.endsWith("/")) url.pathname += "/";
  // The prompt's name: the database's segment of a path URL, else the hostname's first label.
  const segment = url.pathname.split("/").filter(Boolean).at(-1);
  const name = segment ? decodeURIComponent(segment) : (url.hostname.split(".")[0] ?? url.hostname);
  return { name, url: url.href, token: authToken };
}

/** Opens a file to read, failing with a message that names it. */
export async function openFile(file: string): Promise<Readable> {
  try {
    return (await open(file)).createReadStream({ encoding: "utf8" });
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}
