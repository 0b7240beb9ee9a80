import type { Command } from "commander";
import { listAll } from "../api-client.js";
import { type DatabaseInfo, getDatabase, mintDatabaseToken, notFoundHint } from "../database.js";
import { CliError } from "../errors.js";
import type { Io } from "../io.js";
import { emit, renderTable } from "../output.js";
import { type TokenOptions, tokenOptions } from "../token-permissions.js";
import { confirm, remote } from "./context.js";
import { registerDbConfig } from "./db-config.js";
import { dbRestoreCommand, printDeleted } from "./db-deleted.js";
import { groupFor } from "./group-choice.js";
import { importFile } from "./import.js";

function rows(dbs: DatabaseInfo[]) {
  return dbs.map((d) => [d.Name, d.group, d.regions.join(", "), d.http_url ?? d.Hostname]);
}

export function registerDb(program: Command, io: Io): Command {
  const db = program.command("db").description("Databases: create, inspect, query, copy and delete them");
  dbListCommand(db, io);
  dbCreateCommand(db, io);
  dbShowCommand(db, io);
  dbDestroyCommand(db, io);
  dbRestoreCommand(db, io);

  const tokens = db.command("tokens").description("Database tokens, for clients that send SQL");
  tokensCreateCommand(tokens, io);
  registerDbConfig(db, tokens, io);
  return db;
}

function dbListCommand(db: Command, io: Io): void {
  db.command("list")
    .description("List the organization's databases")
    .option("--group <group>", "only the databases of this group")
    .option("--deleted", "the deleted databases that can still be restored instead")
    .action(
      remote(io, async (s, _args, opts) => {
        if (opts.deleted) return printDeleted(s, io, opts.json === true);
        const group = opts.group as string | undefined;
        // A group that doesn't exist is a mistake to say, not an empty list.
        if (group !== undefined) {
          await s.api.call("GET", await s.orgPath(`/groups/${encodeURIComponent(group)}`), {
            hints: { 404: "see `shoal group list` for the organization's groups" },
          });
        }
        const dbs = await listAll<DatabaseInfo>(s.api, await s.orgPath("/databases"), "databases", { group });
        await emit(io.stdout, opts.json, dbs, () =>
          dbs.length > 0
            ? renderTable(["name", "group", "locations", "url"], rows(dbs))
            : group !== undefined
              ? `Group ${group} has no databases. Create one with \`shoal db create <name> --group ${group}\`.\n`
              : "No databases yet. Create one with `shoal db create <name>`.\n",
        );
      }),
    );
}

function dbCreateCommand(db: Command, io: Io): void {
  db.command("create")
    .description("Create a database (in --group, else the only group or `default`, created on first use)")
    .argument("<name>", "lowercase letters, digits and dashes")
    .option("--group <group>", "the group to create it in")
    .option(
      "--location <code>",
      "location of the `default` group if this creates it; else one the group must have",
    )
    .option("--from-db <database>", "start as a copy of another database of the organization")
    .option("--timestamp <rfc3339>", "with --from-db: a copy of that database as it was then")
    .option("--from-file <file>", "start from a SQLite database file (as `shoal db import` does)")
    .option("--from-dump <file>", "start from SQL text, such as `shoal db dump` writes")
    .action(
      remote(io, async (s, [name], opts) => {
        const sources = [opts.fromDb, opts.fromFile, opts.fromDump].filter((v) => v !== undefined);
        if (sources.length > 1) throw new CliError("give one of --from-db, --from-file and --from-dump");
        if (opts.timestamp !== undefined && opts.fromDb === undefined) {
          throw new CliError("--timestamp says when to copy --from-db's database: give --from-db too");
        }
        const group = await groupFor(
          s,
          opts.group as string | undefined,
          opts.location as string | undefined,
        );
        const file = (opts.fromFile ?? opts.fromDump) as string | undefined;
        if (file !== undefined) {
          const expect = opts.fromFile !== undefined ? "sqlite" : "dump";
          await importFile(s, io, { name: String(name), group: group.name, path: file, expect });
        } else {
          const seed = opts.fromDb
            ? {
                type: "database",
                name: opts.fromDb,
                ...(opts.timestamp ? { timestamp: opts.timestamp } : {}),
              }
            : undefined;
          await s.api.call("POST", await s.orgPath("/databases"), {
            body: { name, group: group.name, ...(seed ? { seed } : {}) },
            hints: { 400: "check the name, `--group` (see `shoal group list`) and `--timestamp`" },
          });
        }
        const d = await getDatabase(s, String(name));
        await emit(
          io.stdout,
          opts.json,
          d,
          () =>
            `${group.created ? `Created group default in ${d.primaryRegion}.\n` : ""}` +
            `Created database ${d.Name} in group ${d.group}.\n` +
            `URL: ${d.http_url}\nOpen a SQL shell with \`shoal db shell ${d.Name}\`.\n`,
        );
      }),
    );
}

function dbShowCommand(db: Command, io: Io): void {
  db.command("show")
    .description("Show a database")
    .argument("<name>")
    .option("--url", "print only its URL (the path form, which needs no DNS)")
    .option("--http-url", "the same as --url (the turso CLI's name)")
    .option("--hostname", "print only its hostname (needs DNS for the database domain)")
    .option("--instance-urls", "print the URL of its instance in each location")
    .action(
      remote(io, async (s, [name], opts) => {
        const d = await getDatabase(s, String(name));
        if (opts.instanceUrls) return printInstanceUrls(io, opts.json, d);
        const url = opts.url || opts.httpUrl;
        if (url || opts.hostname) {
          const value = url ? d.http_url : d.Hostname;
          await emit(io.stdout, opts.json, url ? { url: value } : { hostname: value }, () => `${value}\n`);
          return;
        }
        await emit(io.stdout, opts.json, d, () =>
          renderTable(
            ["field", "value"],
            [
              ["name", d.Name],
              ["id", d.DbId],
              ["group", d.group],
              ["locations", d.regions.join(", ")],
              ["primary", d.primaryRegion],
              ["url", d.http_url],
              ["hostname", d.Hostname],
              [
                "blocked",
                [d.block_reads && "reads", d.block_writes && "writes"].filter(Boolean).join(", ") || "no",
              ],
              ["schema", d.is_schema ? "is a schema database" : d.schema || "none"],
              ["encryption", d.encryption_cipher ? `${d.encryption_cipher} (requests need its key)` : "none"],
            ],
          ),
        );
      }),
    );
}

/** Each location's instance, by path: `.../db/<org>/<db>@<location>/` reaches that location's copy. */
async function printInstanceUrls(io: Io, json: boolean | undefined, d: DatabaseInfo): Promise<void> {
  const instances = d.regions.map((location) => ({
    location,
    type: location === d.primaryRegion ? "primary" : "replica",
    url: `${(d.http_url ?? "").replace(/\/$/, "")}@${location}/`,
  }));
  await emit(io.stdout, json, instances, () =>
    renderTable(
      ["location", "type", "url"],
      instances.map((i) => [i.location, i.type, i.url]),
    ),
  );
}

function dbDestroyCommand(db: Command, io: Io): void {
  db.command("destroy")
    .description("Delete a database and all its instances")
    .argument("<name>")
    .option("-y, --yes", "don't ask for confirmation")
    .action(
      remote(io, async (s, [name], opts) => {
        await confirm(io, opts, `Delete database ${name} and all its data?`);
        const r = await s.api.call(
          "DELETE",
          await s.orgPath(`/databases/${encodeURIComponent(String(name))}`),
          {
            hints: notFoundHint(await s.org()),
          },
        );
        await emit(io.stdout, opts.json, r, () => `Deleted database ${name}.\n`);
      }),
    );
}

function tokensCreateCommand(tokens: Command, io: Io): void {
  const create = tokens
    .command("create")
    .description("Mint a token for one database (printed alone, for `$(...)` in scripts)")
    .argument("<name>");
  tokenOptions(create).action(
    remote(io, async (s, [name], opts) => {
      const jwt = await mintDatabaseToken(s, String(name), opts as TokenOptions);
      await emit(io.stdout, opts.json, { jwt }, () => `${jwt}\n`);
    }),
  );
}
