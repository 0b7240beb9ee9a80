import { readFile } from "node:fs/promises";
import { apiError, unreachable } from "../api-client.js";
import { DATA_PLANE_HINTS, type DatabaseAccess } from "../database.js";
import { CliError } from "../errors.js";
import type { HranaStream } from "../hrana.js";
import { type Output, write } from "../io.js";
import { Feeder, type Item } from "./feeder.js";
import { MODES, type Mode, textOf } from "./format.js";

/** What a dot-command reaches of the shell running it (`Shell` in runner.ts is one). */
export interface ShellState {
  readonly db: DatabaseAccess;
  readonly out: Output;
  readonly stream: HranaStream;
  mode: Mode;
  headers: boolean;
  quit: boolean;
  /** Runs a script's statements and commands in order, stopping at the first failure (`.read`). */
  runScript(items: Iterable<Item>): Promise<void>;
}

const HELP = `.dump               the database as SQL text
.headers on|off     show column names in table and csv output (on at first)
.help               this list
.indexes [TABLE]    the names of the indexes (of one table)
.mode [MODE]        show or set the output: table, json or csv
.quit, .exit        leave the shell
.read FILE          run the SQL and commands in FILE, stopping at the first error
.schema [TABLE]     the CREATE statements (of one table and its indexes and triggers)
.tables             the names of the tables and views
`;

function indexesQuery(table: string | undefined): string {
  const of = table ? ` AND tbl_name = '${table.replace(/'/g, "''")}'` : "";
  return `SELECT name FROM sqlite_schema WHERE type = 'index'${of} ORDER BY name`;
}

/** How deep `.read` may nest (a file that reads itself stops here). */
const MAX_READ_DEPTH = 16;
let readDepth = 0;

/** Runs FILE's lines as the shell would take them typed (`.read`). */
async function read(shell: ShellState, file: string | undefined): Promise<void> {
  if (!file) throw new CliError(".read needs a file", "usage: .read FILE");
  if (readDepth >= MAX_READ_DEPTH) throw new CliError(`.read nests more than ${MAX_READ_DEPTH} files deep`);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  const feeder = new Feeder();
  const items = [...text.split("\n").flatMap((line) => feeder.push(line)), ...feeder.finish()];
  readDepth++;
  try {
    await shell.runScript(items);
  } catch (e) {
    // The script's failure names its line; say in which file.
    if (e instanceof CliError) throw new CliError(`${file}, ${e.message}`, e.hint);
    throw e;
  } finally {
    readDepth--;
  }
}

function onOff(value: string | undefined): boolean {
  if (value === "on") return true;
  if (value === "off") return false;
  throw new CliError(`.headers takes on or off, not ${value ?? "nothing"}`);
}

/** Table and view names, without SQLite's and libSQL's own. */
const TABLES = `SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE 'libsql\\_%' ESCAPE '\\' AND name NOT LIKE '\\_litestream\\_%' ESCAPE '\\' ORDER BY name`;

function schemaQuery(table: string | undefined): string {
  const own = "name NOT LIKE 'sqlite\\_%' ESCAPE '\\'";
  if (!table) return `SELECT sql FROM sqlite_schema WHERE sql NOT NULL AND ${own} ORDER BY rowid`;
  const t = `'${table.replace(/'/g, "''")}'`;
  return `SELECT sql FROM sqlite_schema WHERE sql NOT NULL AND ${own} AND tbl_name = ${t} ORDER BY type = 'table' DESC, rowid`;
}

/** Streams the data plane's `GET .../dump` to the shell's output. */
async function dump(shell: ShellState): Promise<void> {
  let res: Response;
  try {
    res = await fetch(`${shell.db.url}dump`, { headers: { authorization: `Bearer ${shell.db.token}` } });
  } catch (e) {
    throw unreachable(shell.db.url, e);
  }
  if (!res.ok || !res.body) throw apiError(res.status, await res.text(), DATA_PLANE_HINTS);
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    await write(shell.out, decoder.decode(chunk, { stream: true }));
  }
  await write(shell.out, decoder.decode());
}

/** Runs one dot-command line, such as `.mode json`. */
export async function runDotCommand(shell: ShellState, line: string): Promise<void> {
  const [command, ...args] = line.split(/\s+/);
  switch (command) {
    case ".quit":
    case ".exit":
      shell.quit = true;
      return;
    case ".help":
      return write(shell.out, HELP);
    case ".tables": {
      const r = await shell.stream.execute(TABLES);
      return write(shell.out, r.rows.map((row) => `${textOf(row[0]!, "")}\n`).join(""));
    }
    case ".schema": {
      const r = await shell.stream.execute(schemaQuery(args[0]));
      return write(shell.out, r.rows.map((row) => `${textOf(row[0]!, "")};\n`).join(""));
    }
    case ".dump":
      return dump(shell);
    case ".indexes": {
      const r = await shell.stream.execute(indexesQuery(args[0]));
      return write(shell.out, r.rows.map((row) => `${textOf(row[0]!, "")}\n`).join(""));
    }
    case ".headers":
      shell.headers = onOff(args[0]);
      return;
    case ".read":
      return read(shell, args.join(" ") || undefined);
    case ".mode": {
      if (!args[0]) return write(shell.out, `${shell.mode}\n`);
      if (!MODES.includes(args[0] as Mode)) {
        throw new CliError(`unknown mode ${args[0]}`, `use one of: ${MODES.join(", ")}`);
      }
      shell.mode = args[0] as Mode;
      return;
    }
    default:
      throw new CliError(`unknown command ${command}`, "type .help for the list");
  }
}
