import type { Command } from "commander";
import { listAll } from "../api-client.js";
import { CliError } from "../errors.js";
import type { Io } from "../io.js";
import { emit, renderTable } from "../output.js";
import type { Session } from "../session.js";
import { remote } from "./context.js";

/** A deleted database as v3 lists it (the fields the CLI shows). */
interface DeletedDatabase {
  Name: string;
  DbId: string;
  group: string;
  deleted_at: string;
  group_deleted_at: string | null;
}

/** The organization's id, which v3's paths take. */
async function orgId(s: Session): Promise<string> {
  return (await s.api.call<{ organization: { id: string } }>("GET", await s.orgPath())).organization.id;
}

export async function listDeleted(s: Session): Promise<DeletedDatabase[]> {
  const path = `/v3/organizations/${await orgId(s)}/databases`;
  return listAll<DeletedDatabase>(s.api, path, "databases", { deleted: "true", limit: "1000" });
}

/** `shoal db list --deleted`: the deleted databases that can still be restored, newest first. */
export async function printDeleted(s: Session, io: Io, json: boolean): Promise<void> {
  const dbs = await listDeleted(s);
  await emit(io.stdout, json, dbs, () =>
    dbs.length === 0
      ? "No deleted database can be restored.\n"
      : renderTable(
          ["name", "id", "group", "deleted at", "with its group"],
          dbs.map((d) => [d.Name, d.DbId, d.group, d.deleted_at, d.group_deleted_at ? "yes" : ""]),
        ),
  );
}

/** `shoal db restore <name|id> [--name <new>]`. */
export function dbRestoreCommand(db: Command, io: Io): void {
  db.command("restore")
    .description(
      "Bring back a deleted database as it was (see `shoal db list --deleted`); it needs new tokens",
    )
    .argument("<database>", "the deleted database's name (its newest deletion) or id")
    .option("--name <name>", "restore it under this name (when the old one is taken)")
    .action(
      remote(io, async (s, [which], opts) => {
        const wanted = String(which);
        const deleted = await listDeleted(s);
        const match = deleted.find((d) => d.DbId === wanted) ?? deleted.find((d) => d.Name === wanted);
        if (!match)
          throw new CliError(
            `no deleted database ${wanted} can be restored`,
            "see the ones that can with `shoal db list --deleted`",
          );
        const r = await s.api.call<{ database: { Name: string } }>(
          "POST",
          `/v3/organizations/${await orgId(s)}/databases/${match.DbId}/restore`,
          { body: opts.name ? { name: opts.name } : {} },
        );
        await emit(io.stdout, opts.json, r.database, () => `Restored database ${r.database.Name}.\n`);
      }),
    );
}

/** `shoal org recovery [on|off]`: whether deleted databases are kept restorable. */
export function orgRecoveryCommand(org: Command, io: Io): void {
  org
    .command("recovery")
    .description("Show, or turn on or off, keeping deleted databases restorable (owners and admins)")
    .argument("[state]", "on or off")
    .action(
      remote(io, async (s, [state], opts) => {
        if (state !== undefined && state !== "on" && state !== "off")
          throw new CliError(`unknown state ${String(state)}`, "use on or off");
        if (state !== undefined)
          await s.api.call("PATCH", await s.orgPath(), { body: { restore_enabled: state === "on" } });
        const org = (
          await s.api.call<{ organization: { slug: string; restore_enabled: boolean } }>(
            "GET",
            await s.orgPath(),
          )
        ).organization;
        await emit(
          io.stdout,
          opts.json,
          { restore_enabled: org.restore_enabled },
          () =>
            `Recovery of deleted databases is ${org.restore_enabled ? "on" : "off"} for organization ${org.slug}.\n`,
        );
      }),
    );
}
