import type { Command } from "commander";
import { listAll } from "../api-client.js";
import { writeConfig } from "../config-file.js";
import type { Io } from "../io.js";
import { emit, renderTable } from "../output.js";
import { confirm, remote } from "./context.js";
import { orgRecoveryCommand } from "./db-deleted.js";
import { registerOrgJwks } from "./org-jwks.js";

interface Organization {
  name: string;
  slug: string;
  type: string;
}
interface Member {
  username: string;
  role: string;
  email: string;
}

const ROLES = "owner, admin, member or viewer";

export function registerOrg(program: Command, io: Io): void {
  const org = program
    .command("org")
    .description("Organizations: list, create, switch, members, trusted identity providers");
  orgListCommand(org, io);
  orgCreateCommand(org, io);
  orgSwitchCommand(org, io);
  orgDestroyCommand(org, io);
  orgRecoveryCommand(org, io);

  const members = org.command("members").description("The members of the organization and their roles");
  membersListCommand(members, io);
  membersAddCommand(members, io);
  membersInviteCommand(members, io);
  membersRoleCommand(members, io);
  membersRemoveCommand(members, io);

  registerOrgJwks(org, io);
}

function orgListCommand(org: Command, io: Io): void {
  org
    .command("list")
    .description("List the organizations you belong to (* marks the one commands use)")
    .action(
      remote(io, async (s, _args, opts) => {
        const orgs = await s.api.call<Organization[]>("GET", "/v1/organizations");
        const current = await s.org();
        await emit(io.stdout, opts.json, orgs, () =>
          renderTable(
            ["", "slug", "name", "type"],
            orgs.map((o) => [o.slug === current ? "*" : "", o.slug, o.name, o.type]),
          ),
        );
      }),
    );
}

function orgCreateCommand(org: Command, io: Io): void {
  org
    .command("create")
    .description("Create a team organization (you become its owner)")
    .argument("<name>", "its name; the slug is made from it")
    .action(
      remote(io, async (s, [name], opts) => {
        const r = await s.api.call<{ organization: Organization }>("POST", "/v1/organizations", {
          body: { name },
        });
        const o = r.organization;
        await emit(
          io.stdout,
          opts.json,
          o,
          () =>
            `Created organization ${o.name} (slug ${o.slug}). Use it with \`shoal org switch ${o.slug}\`.\n`,
        );
      }),
    );
}

function orgSwitchCommand(org: Command, io: Io): void {
  org
    .command("switch")
    .description("Choose the organization later commands act on (saved in the config file)")
    .argument("<slug>", "the organization's slug, as `shoal org list` shows it")
    .action(
      remote(io, async (s, [slug], opts) => {
        const r = await s.api.call<{ organization: Organization }>(
          "GET",
          `/v1/organizations/${encodeURIComponent(String(slug))}`,
          {
            hints: {
              403: "you are not a member of it: see your organizations with `shoal org list`",
              404: "see your organizations with `shoal org list`",
            },
          },
        );
        await writeConfig(s.configFile, { ...s.saved, org: r.organization.slug });
        await emit(
          io.stdout,
          opts.json,
          r.organization,
          () => `Now using organization ${r.organization.slug}.\n`,
        );
      }),
    );
}

function membersListCommand(members: Command, io: Io): void {
  members
    .command("list")
    .description("List the members and their roles")
    .action(
      remote(io, async (s, _args, opts) => {
        const list = await listAll<Member>(s.api, await s.orgPath("/members"), "members");
        await emit(io.stdout, opts.json, list, () =>
          renderTable(
            ["username", "role", "email"],
            list.map((m) => [m.username, m.role, m.email]),
          ),
        );
      }),
    );
}

function membersAddCommand(members: Command, io: Io): void {
  members
    .command("add")
    .description("Add a user to the organization")
    .argument("<username>")
    .option("--role <role>", `${ROLES}`, "member")
    .action(
      remote(io, async (s, [username], opts) => {
        const r = await s.api.call("POST", await s.orgPath("/members"), {
          body: { username, role: opts.role },
        });
        const slug = await s.org();
        await emit(
          io.stdout,
          opts.json,
          r,
          () => `Added ${username} to organization ${slug} as ${opts.role}.\n`,
        );
      }),
    );
}

function membersRoleCommand(members: Command, io: Io): void {
  members
    .command("role")
    .description("Change a member's role")
    .argument("<username>")
    .argument("<role>", ROLES)
    .action(
      remote(io, async (s, [username, role], opts) => {
        const path = await s.orgPath(`/members/${encodeURIComponent(String(username))}`);
        const r = await s.api.call("PATCH", path, { body: { role } });
        await emit(io.stdout, opts.json, r, () => `${username} is now ${role}.\n`);
      }),
    );
}

function membersRemoveCommand(members: Command, io: Io): void {
  members
    .command("remove")
    .description("Remove a user from the organization")
    .argument("<username>")
    .option("-y, --yes", "don't ask for confirmation")
    .action(
      remote(io, async (s, [username], opts) => {
        await confirm(io, opts, `Remove ${username} from organization ${await s.org()}?`);
        const r = await s.api.call(
          "DELETE",
          await s.orgPath(`/members/${encodeURIComponent(String(username))}`),
        );
        await emit(io.stdout, opts.json, r, () => `Removed ${username} from the organization.\n`);
      }),
    );
}

function orgDestroyCommand(org: Command, io: Io): void {
  org
    .command("destroy")
    .description("Delete a team organization with its groups and databases (owners only)")
    .argument("<slug>")
    .option("-y, --yes", "don't ask for confirmation")
    .action(
      remote(io, async (s, [slug], opts) => {
        await confirm(io, opts, `Delete organization ${slug} with all its groups and databases?`);
        const r = await s.api.call("DELETE", `/v1/organizations/${encodeURIComponent(String(slug))}`, {
          hints: { 404: "see your organizations with `shoal org list`" },
        });
        const current = await s.org();
        const next = slug === current ? " Choose another with `shoal org switch <slug>`." : "";
        await emit(io.stdout, opts.json, r, () => `Deleted organization ${slug}.${next}\n`);
      }),
    );
}

function membersInviteCommand(members: Command, io: Io): void {
  members
    .command("invite")
    .description("Invite someone by e-mail (Shoal sends no mail: pass on the invite it prints)")
    .argument("<email>")
    .option("--role <role>", `${ROLES}`, "member")
    .option("--admin", "invite as an admin (the turso CLI's flag; same as --role admin)")
    .action(
      remote(io, async (s, [email], opts) => {
        const role = opts.admin ? "admin" : opts.role;
        const r = await s.api.call<{ invited: { ID: number; Token: string; Role: string } }>(
          "POST",
          await s.orgPath("/invites"),
          { body: { email, role } },
        );
        const { ID, Token } = r.invited;
        const slug = await s.org();
        await emit(
          io.stdout,
          opts.json,
          r.invited,
          () =>
            `Invited ${email} to organization ${slug} as ${role}.\n` +
            `They accept with POST /v1/user/invites/${ID}/accept and {"token": "${Token}"} once they have an account.\n`,
        );
      }),
    );
}
