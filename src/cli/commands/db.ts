import type { Command } from "commander";
import { listAll } from "../api-client.js";
import { type DatabaseInfo, getDatabase, mintDatabaseToken, notFoundHint } from "../database.js";
import { CliError } from "../errors.js";
import type { Io } from "../io.js";
import { emit, renderTable } from "../output.js";
import type { Session } from "../session.js";
import { type TokenOptions, tokenOptions } from "../token-permissions.js";
import { confirm, remote } from "./context.js";
import { registerDbConfig } from "./db-config.js";
import { dbRestoreCommand, printDeleted } from "./db-deleted.js";
import { defaultLocation, type Group } from "./group.js";

function rows(dbs: DatabaseInfo[]) {
  return dbs.map((d) => [d.Name, d.group, d.regions.join(", "), d.http_url ?? d.Hostname]);
}

/**
 * The group a new database goes in: `--group`; else the organization's only group, or `default`.
 * An organization with no group at all gets a `default` group first (as the turso CLI does), in
 * `--location` if given, so a new user's first create works. A database lives in its group's
 * locations: a `--location` the chosen group doesn't have is refused rather than ignored.
 */
export async function groupFor(
  s: Session,
  requested: string | undefined,
  location: string | undefined,
): Promise<{ name: string; created: boolean }> {
  const groups = await listAll<Group>(s.api, await s.orgPath("/groups"), "groups");
  if (groups.length === 0 && requested === undefined) {
    await s.api.call("POST", await s.orgPath("/groups"), {
      body: { name: "default", location: location ?? (await defaultLocation(s)) },
      hints: { 400: "the location codes are listed by `GET /v1/locations`" },
    });
    return { name: "default", created: true };
  }
  const group =
    requested !== undefined
      ? groups.find((g) => g.name === requested)
      : (groups.find((g) => g.name === "default") ?? (groups.length === 1 ? groups[0] : undefined));
  if (requested !== undefined && !group) {
    throw new CliError(`the organization has no group named ${requested}`, groupChoice(groups));
  }
  if (!group) throw new CliError("the organization has no group named default", groupChoice(groups));
  if (location !== undefined && !group.locations.includes(location)) {
    throw new CliError(
      `group ${group.name} has no location ${location} (it has ${group.locations.join(", ")})`,
      `a database lives in its group's locations: add one with \`shoal group locations add ${group.name} ${location}\`, or leave --location out`,
    );
  }
  return { name: group.name, created: false };
}

function groupChoice(groups: Group[]): string {
  return groups.length === 0
    ? "create one with `shoal group create <name> --location <code>`"
    : `choose one with --group (${groups.map((g) => g.name).join(", ")})`;
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
    .action(
      remote(io, async (s, [name], opts) => {
        const group = await groupFor(
          s,
          opts.group as string | undefined,
          opts.location as string | undefined,
        );
        const seed = opts.fromDb ? { type: "database", name: opts.fromDb } : undefined;
        await s.api.call("POST", await s.orgPath("/databases"), {
          body: { name, group: group.name, ...(seed ? { seed } : {}) },
          hints: { 400: "check the name and `--group` (see `shoal group list`)" },
        });
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
