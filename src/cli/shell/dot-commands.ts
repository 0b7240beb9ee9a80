import { apiError, unreachable } from "../api-client.js";
import { DATA_PLANE_HINTS, type DatabaseAccess } from "../database.js";
import { CliError } from "../errors.js";
import type { HranaStream } from "../hrana.js";
import { type Output, write } from "../io.js";
import { MODES, type Mode, textOf } from "./format.js";

/** What a dot-command reaches of the shell running it (`Shell` in runner.ts is one). */
export interface ShellState {
  readonly db: DatabaseAccess;
  readonly out: Output;
  readonly stream: HranaStream;
  mode: Mode;
  quit: boolean;
}

const HELP = `.dump               the database as SQL text
.help               this list
.mode [MODE]        show or set the output: table, json or csv
.quit, .exit        leave the shell
.schema [TABLE]     the CREATE statements (of one table and its indexes and triggers)
.tables             the names of the tables and views
`;

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
