import { NotFoundError } from "../errors.js";
import { derivedUuid } from "../lib/ids.js";
import { requireDatabase } from "./access.js";
import type { Ctx } from "./context.js";

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
export async function listInstances(ctx: Ctx, slug: string, name: string): Promise<Instance[]> {
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

export async function getInstance(ctx: Ctx, slug: string, name: string, instance: string): Promise<Instance> {
  const found = (await listInstances(ctx, slug, name)).find(
    (i) => i.name === instance || i.uuid === instance,
  );
  if (!found) throw new NotFoundError(`instance ${instance} not found`);
  return found;
}
