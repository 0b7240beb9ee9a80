import type { Command } from "commander";
import { listAll } from "../api-client.js";
import type { Io } from "../io.js";
import { emit, renderTable } from "../output.js";
import type { Session } from "../session.js";
import { type TokenOptions, tokenOptions, tokenRequest } from "../token-permissions.js";
import { confirm, remote } from "./context.js";
import { invalidateTokens } from "./db-config.js";

export interface Group {
  name: string;
  primary: string;
  locations: string[];
  archived: boolean;
  status?: { locations?: { name: string; status: string }[] };
}

const groupNotFound = { 404: "see the organization's groups with `shoal group list`" };

/** The first location of the server's catalogue, for a group created without one. */
export async function defaultLocation(s: Session): Promise<string> {
  const r = await s.api.call<{ locations: Record<string, string> }>("GET", "/v1/locations");
  const first = Object.keys(r.locations)[0];
  return first ?? "default";
}

function groupRows(groups: Group[]) {
  return groups.map((g) => [g.name, g.primary, g.locations.join(", "), g.archived ? "archived" : "active"]);
}

export function registerGroup(program: Command, io: Io): void {
  const group = program
    .command("group")
    .description("Groups: a set of locations that every database in the group lives in");
  groupListCommand(group, io);
  groupCreateCommand(group, io);
  groupDestroyCommand(group, io);
  const tokens = group.command("tokens").description("Group tokens, which open every database of a group");
  groupTokensCreateCommand(tokens, io);
  groupTokensInvalidateCommand(tokens, io);

  const locations = group.command("locations").description("Add or remove the group's locations");
  for (const [verb, method, done] of [
    ["add", "POST", "Added"],
    ["remove", "DELETE", "Removed"],
  ] as const) {
    locations
      .command(verb)
      .description(
        verb === "add"
          ? "Add locations: every database of the group gets a replica there"
          : "Remove locations and their replicas (not the primary)",
      )
      .argument("<group>")
      .argument("<locations...>", "location codes, e.g. aws-eu-west-1")
      .action(
        remote(io, async (s, [name, codes], opts) => {
          let g: Group | undefined;
          for (const code of codes as string[]) {
            const path = await s.orgPath(
              `/groups/${encodeURIComponent(String(name))}/locations/${encodeURIComponent(code)}`,
            );
            g = (await s.api.call<{ group: Group }>(method, path, { hints: groupNotFound })).group;
          }
          await emit(
            io.stdout,
            opts.json,
            g,
            () =>
              `${done} ${(codes as string[]).join(", ")}; group ${name} is now in ${g?.locations.join(", ")}.\n`,
          );
        }),
      );
  }
}

function groupListCommand(group: Command, io: Io): void {
  group
    .command("list")
    .description("List the organization's groups")
    .action(
      remote(io, async (s, _args, opts) => {
        const groups = await listAll<Group>(s.api, await s.orgPath("/groups"), "groups");
        await emit(io.stdout, opts.json, groups, () =>
          renderTable(["name", "primary", "locations", "status"], groupRows(groups)),
        );
      }),
    );
}

function groupCreateCommand(group: Command, io: Io): void {
  group
    .command("create")
    .description("Create a group; its location becomes the primary location of its databases")
    .argument("<name>")
    .option("--location <code>", "primary location (default: the first of `GET /v1/locations`)")
    .action(
      remote(io, async (s, [name], opts) => {
        const location = (opts.location as string | undefined) ?? (await defaultLocation(s));
        const r = await s.api.call<{ group: Group }>("POST", await s.orgPath("/groups"), {
          body: { name, location },
        });
        await emit(
          io.stdout,
          opts.json,
          r.group,
          () => `Created group ${r.group.name} in ${r.group.primary}.\n`,
        );
      }),
    );
}

function groupDestroyCommand(group: Command, io: Io): void {
  group
    .command("destroy")
    .description("Delete a group and every database in it")
    .argument("<name>")
    .option("-y, --yes", "don't ask for confirmation")
    .action(
      remote(io, async (s, [name], opts) => {
        await confirm(io, opts, `Delete group ${name} and all of its databases?`);
        const path = await s.orgPath(`/groups/${encodeURIComponent(String(name))}`);
        const r = await s.api.call<{ group: Group }>("DELETE", path, { hints: groupNotFound });
        await emit(io.stdout, opts.json, r.group, () => `Deleted group ${name}.\n`);
      }),
    );
}

function groupTokensCreateCommand(tokens: Command, io: Io): void {
  const create = tokens
    .command("create")
    .description("Mint a token for every database of a group, present and future (printed alone)")
    .argument("<group>");
  tokenOptions(create).action(
    remote(io, async (s, [name], opts) => {
      const r = await s.api.call<{ jwt: string }>(
        "POST",
        await s.orgPath(`/groups/${encodeURIComponent(String(name))}/auth/tokens`),
        { ...tokenRequest(opts as TokenOptions), hints: groupNotFound },
      );
      await emit(io.stdout, opts.json, r, () => `${r.jwt}\n`);
    }),
  );
}

function groupTokensInvalidateCommand(tokens: Command, io: Io): void {
  tokens
    .command("invalidate")
    .description("Invalidate every token of a group: its group tokens and its databases' tokens")
    .argument("<group>")
    .option("-y, --yes", "don't ask for confirmation")
    .action(
      remote(io, async (s, [name], opts) => {
        await invalidateTokens(s, io, opts, {
          what: `group ${name}`,
          path: await s.orgPath(`/groups/${encodeURIComponent(String(name))}/auth/rotate`),
          mint: `shoal group tokens create ${name}`,
          hints: groupNotFound,
        });
      }),
    );
}
