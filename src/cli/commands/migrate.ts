import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import type { Command } from "commander";
import { openDatabase } from "../database.js";
import { CliError } from "../errors.js";
import { HranaStream } from "../hrana.js";
import type { Io } from "../io.js";
import { emit } from "../output.js";
import { hasStatement, splitStatements } from "../sql-split.js";
import { remote } from "./context.js";

const NUMBERED = /^(\d+)[^/]*\.sql$/i;

function quote(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** The folder's numbered `.sql` files in the order they apply: by number, each number once. */
export async function migrationFiles(folder: string): Promise<string[]> {
  const names = await readdir(folder).catch((e: NodeJS.ErrnoException) => {
    throw new CliError(`cannot read the folder ${folder}: ${e.code ?? e.message}`);
  });
  const numbered = names
    .map((n) => ({ n, m: NUMBERED.exec(n) }))
    .filter((x) => x.m)
    .map((x) => ({ name: x.n, number: BigInt(x.m![1]!) }))
    .sort((a, b) => (a.number < b.number ? -1 : a.number > b.number ? 1 : 0));
  if (numbered.length === 0) {
    throw new CliError(
      `${folder} holds no numbered .sql files`,
      "name them like 0001_create_users.sql, 0002_add_index.sql",
    );
  }
  for (let i = 1; i < numbered.length; i++) {
    if (numbered[i]!.number === numbered[i - 1]!.number) {
      throw new CliError(
        `${numbered[i - 1]!.name} and ${numbered[i]!.name} have the same number`,
        "give every migration its own number",
      );
    }
  }
  return numbered.map((x) => x.name);
}

/** One migration file as a transaction that also records it, so it applies completely or not at all. */
async function migrationStatements(
  folder: string,
  file: string,
  table: string,
): Promise<{ sql: string; line: number }[]> {
  const text = await readFile(path.join(folder, file), "utf8");
  const { statements, rest } = splitStatements(text);
  if (hasStatement(rest))
    statements.push({ sql: rest.trim(), line: text.slice(0, text.length - rest.length).split("\n").length });
  return [
    { sql: "BEGIN", line: 0 },
    ...statements,
    {
      sql: `INSERT INTO ${table} (name, applied_at) VALUES (${quote(file)}, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`,
      line: 0,
    },
    { sql: "COMMIT", line: 0 },
  ];
}

export function registerMigrate(db: Command, io: Io): void {
  db.command("migrate")
    .description("Apply a folder's numbered .sql files in order, each once (recorded in the database)")
    .argument("<name>", "the database")
    .argument("<folder>", "the migrations, e.g. migrations/0001_init.sql, migrations/0002_users.sql")
    .option("--dry-run", "only list the migrations that would be applied")
    .option("--table <table>", "the table that records applied migrations", "shoal_migrations")
    .action(
      remote(io, async (s, [name, folder], opts) => {
        const dir = String(folder);
        const table = String(opts.table);
        if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(table)) throw new CliError(`${table} is not a plain table name`);
        const files = await migrationFiles(dir);
        const access = await openDatabase(s, String(name));
        const stream = new HranaStream(access.url, access.token);
        const applied: string[] = [];
        try {
          await stream.execute(
            `CREATE TABLE IF NOT EXISTS ${table} (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE, applied_at TEXT NOT NULL)`,
          );
          const done = new Set(
            (await stream.execute(`SELECT name FROM ${table}`)).rows.map(
              (r) => (r[0] as { value: string }).value,
            ),
          );
          const pending = files.filter((f) => !done.has(f));
          if (!opts.dryRun) {
            for (const file of pending) {
              const steps = await migrationStatements(dir, file, table);
              const outcome = await stream.batch(
                steps.map((x) => x.sql),
                true,
              );
              if (outcome.failed) {
                const at = steps[outcome.failed.step]!;
                throw new CliError(
                  `migration ${file} failed${at.line ? ` at line ${at.line}` : ""}: ${outcome.failed.error.message}`,
                  `it was rolled back${pending.length > 1 ? " and the ones after it were not applied" : ""}; fix it and run the command again`,
                );
              }
              applied.push(file);
            }
          }
          const result = {
            applied,
            pending: opts.dryRun ? pending : [],
            already_applied: files.filter((f) => done.has(f)),
          };
          await emit(io.stdout, opts.json, result, () =>
            opts.dryRun
              ? pending.length
                ? `Would apply:\n${pending.map((f) => `  ${f}\n`).join("")}`
                : "Nothing to apply: every migration is applied.\n"
              : `${applied.map((f) => `Applied ${f}\n`).join("")}${applied.length} applied, ${result.already_applied.length} already applied before.\n`,
          );
        } catch (e) {
          if (applied.length && e instanceof CliError) {
            throw new CliError(`${e.message} (applied before it: ${applied.join(", ")})`, e.hint);
          }
          throw e;
        } finally {
          await stream.close();
        }
      }),
    );
}
