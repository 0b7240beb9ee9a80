import { listAll } from "../api-client.js";
import { CliError } from "../errors.js";
import type { Session } from "../session.js";
import { defaultLocation, type Group } from "./group.js";

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
