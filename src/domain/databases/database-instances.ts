import { derivedUuid } from "../../lib/ids.js";
import { requireFilesHere } from "../cluster/placement-tx.js";
import { requireDatabase } from "../core/access-tx.js";
import type { Ctx } from "../core/context.js";
import { addGroupLocation, removeGroupLocation } from "../groups/group-locations.js";
import type { GroupPorts } from "../groups/ports.js";
import { databaseErrors } from "./errors.js";
import type { DatabasePorts } from "./ports.js";

/** A database's instance in one location of its group. */
export interface Instance {
  uuid: string;
  /** The location code (Turso names instances by location). */
  name: string;
  type: "primary" | "replica";
  region: string;
  /** `<db>-<org>.<location>.<db domain>`: addresses this instance (reads at a replica are served there). */
  hostname: string;
}

/** Every instance of a database: the primary first, then a replica per other location of its group. */
export async function listInstances(
  ctx: Ctx<DatabasePorts & GroupPorts>,
  slug: string,
  name: string,
): Promise<Instance[]> {
  const { db, locations } = await ctx.deps.store.read(async (r) => {
    const { db } = await requireDatabase(r, ctx.actor, slug, name, "read");
    return { db, locations: (await r.groups.locationsOf([db.group_id])).get(db.group_id) ?? [] };
  });
  return locations.map((location) => ({
    uuid: derivedUuid(db.id, location),
    name: location,
    type: location === db.primary_location ? "primary" : "replica",
    region: location,
    hostname: `${db.hostname_label}.${location}.${ctx.deps.dbDomain}`,
  }));
}

// The turso CLI recognises this wording.

export async function getInstance(
  ctx: Ctx<DatabasePorts & GroupPorts>,
  slug: string,
  name: string,
  instance: string,
): Promise<Instance> {
  const found = (await listInstances(ctx, slug, name)).find(
    (i) => i.name === instance || i.uuid === instance,
  );
  if (!found) throw databaseErrors.instanceNotFound(instance, name);
  return found;
}

/** The database and the group it is in, once the caller may change that database's instances. */
async function databaseToChange(ctx: Ctx<DatabasePorts & GroupPorts>, slug: string, name: string) {
  const { db } = await ctx.deps.store.read((r) => requireDatabase(r, ctx.actor, slug, name, "db:configure"));
  return db;
}

/**
 * Legacy `POST .../databases/{db}/instances` (`{"Location"}`), from before groups. In Shoal every
 * instance follows its group's locations, so this adds the location to the database's group (which
 * also needs `group:configure`), giving every database of the group an instance there. Asking for
 * a location the group already has changes nothing.
 */
export async function createInstance(
  ctx: Ctx<DatabasePorts & GroupPorts>,
  slug: string,
  name: string,
  location: string,
): Promise<Instance> {
  if (location === "") throw databaseErrors.locationRequired();
  const db = await databaseToChange(ctx, slug, name);
  await addGroupLocation(ctx, slug, db.group_name, location, { id: db.id, name });
  return getInstance(ctx, slug, name, location);
}

/**
 * Legacy `DELETE .../databases/{db}/instances/{i}`. The location belongs to the group, so an
 * instance can only go on its own when the database is alone in its group (the location then
 * leaves the group); otherwise the answer says to remove the location from the group. The primary
 * never goes: delete the database instead.
 */
export async function deleteInstance(
  ctx: Ctx<DatabasePorts & GroupPorts>,
  slug: string,
  name: string,
  instance: string,
): Promise<Instance> {
  const db = await databaseToChange(ctx, slug, name);
  const found = await getInstance(ctx, slug, name, instance);
  if (found.type === "primary") {
    throw databaseErrors.primaryInstanceKept(found.name, name);
  }
  await removeGroupLocation(ctx, slug, db.group_name, found.name, { id: db.id, name });
  return found;
}

/**
 * Legacy `GET .../instances/{i}/wait`: resolves once the instance has everything its primary had
 * committed at the time of the call (at once for the primary). 503 after `timeoutMs`.
 */
export async function waitForInstance(
  ctx: Ctx<DatabasePorts & GroupPorts>,
  slug: string,
  name: string,
  instance: string,
  timeoutMs: number,
): Promise<void> {
  const found = await getInstance(ctx, slug, name, instance);
  if (found.type === "primary") return;
  const { db } = await ctx.deps.store.read(async (r) => {
    const found = await requireDatabase(r, ctx.actor, slug, name, "read");
    // The primary's node knows what is committed and sees the replicas' progress: it answers.
    await requireFilesHere(r, ctx.deps, [found.db.primary_location]);
    return found;
  });
  if (!(await ctx.deps.replicas.waitCaughtUp([db.id], found.name, timeoutMs))) {
    throw databaseErrors.instanceBehind(found.name, name, timeoutMs);
  }
}
