import type { Store } from "../../src/store/store.js";

const now = () => new Date().toISOString();

/**
 * Rows a store-level test starts from: organization `acme` (o1), its group `default` (g1) with its
 * primary in `primary` and `locations` in that order, and, unless `database` is false, its
 * database `db` (d1).
 */
export async function seedGroup(
  store: Store,
  primary: string,
  locations: readonly string[],
  database = true,
): Promise<void> {
  await store.write(async (r) => {
    const org = { id: "o1", slug: "acme", name: "acme", type: "team" as const, created_at: now() };
    await r.organizations.insert({ ...org, overages: 0, blocked_reads: 0, blocked_writes: 0 });
    await r.groups.insert({
      ...{ id: "g1", org_id: "o1", name: "default", primary_location: primary, archived: 0 },
      ...{ delete_protection: 0, created_at: now(), token_generation: 0 },
    });
    for (const [position, location] of locations.entries())
      await r.groups.insertLocation({ group_id: "g1", location, position, added_at: now() });
    if (!database) return;
    await r.databases.insert({
      ...{ id: "d1", org_id: "o1", group_id: "g1", name: "db", size_limit: null, block_reads: 0 },
      ...{ block_writes: 0, allow_attach: 0, delete_protection: 0, created_at: now() },
      ...{ hostname_label: "db-acme", token_generation: 0 },
    });
  });
}
