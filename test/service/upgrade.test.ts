/**
 * Upgrades: a data folder written by each earlier release (test/fixtures/upgrade/<version>, made
 * by scripts/make-upgrade-fixture.mjs with that release's own build) starts under this build and
 * serves everything it held: its API tokens, database tokens, rows at the primary and at a
 * replica location, an encrypted database with its key, and new writes and databases.
 *
 * The fixture's control plane is the embedded store, so this runs on it whatever store the
 * suite uses. A release that changes what the data folder holds adds its fixture here.
 */
import { chmodSync, cpSync, readdirSync, readFileSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient } from "@libsql/client";
import { createClient as createApiClient } from "@tursodatabase/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/lib/logger.js";
import { type Shoal, startShoal } from "../../src/main.js";
import { testConfig } from "../helpers/shoal.js";

const FIXTURES = path.resolve(import.meta.dirname, "../fixtures/upgrade");

interface Fixture {
  version: string;
  adminToken: string;
  users: Record<string, string>;
  databases: Array<{ org: string; name: string; group: string; token: string; rows: number; key?: string }>;
}

/** Folders and files must be private to this user, as Shoal insists (git doesn't keep modes). */
function makePrivate(dir: string): void {
  chmodSync(dir, 0o700);
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) makePrivate(p);
    else chmodSync(p, 0o600);
  }
}

const versions = readdirSync(FIXTURES).sort();

describe.each(versions)("a data folder written by Shoal %s", (version) => {
  const fixture = JSON.parse(readFileSync(path.join(FIXTURES, version, "fixture.json"), "utf8")) as Fixture;
  let dir: string;
  let shoal: Shoal;
  const db = (name: string) => fixture.databases.find((d) => d.name === name)!;
  const client = (name: string, location?: string) => {
    const d = db(name);
    const at = location ? `${d.name}@${location}` : d.name;
    return createClient({
      url: `${shoal.url}/db/${d.org}/${at}/`,
      authToken: d.token,
      ...(d.key ? { remoteEncryptionKey: d.key } : {}),
    });
  };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), `shoal-upgrade-${version}-`));
    const dataDir = path.join(dir, "data");
    cpSync(path.join(FIXTURES, version, "data-folder"), dataDir, { recursive: true });
    makePrivate(dataDir);
    const config = testConfig(dataDir, { adminToken: fixture.adminToken, metadataUrl: undefined });
    shoal = await startShoal(config, { log: createLogger("silent"), announce: () => {} });
    await shoal.reconciled;
  });
  afterAll(async () => {
    await shoal?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("accepts the release's API tokens and lists what it held", async () => {
    const turso = createApiClient({ org: "acme", token: fixture.users.alice!, baseUrl: `${shoal.url}/v1/` });
    const names = (await turso.databases.list()).map((d) => d.name).sort();
    expect(names).toEqual(["orders", "shared", "vault"]);
    const groups = (await turso.groups.list()).map((g) => [g.name, [...g.locations].sort()]);
    expect(groups).toContainEqual(["spread", ["aws-eu-west-1", "aws-us-east-1"]]);
    const bob = createApiClient({ org: "bob", token: fixture.users.bob!, baseUrl: `${shoal.url}/v1/` });
    expect((await bob.databases.list()).map((d) => d.name)).toEqual(["notes"]);
  });

  it("serves every database's rows with the release's database tokens, the encrypted one with its key", async () => {
    for (const d of fixture.databases) {
      const c = client(d.name);
      const r = await c.execute("SELECT count(*) AS n, sum(amount) AS total FROM items");
      expect(Number(r.rows[0]!.n), d.name).toBe(d.rows);
      expect(Number(r.rows[0]!.total), d.name).toBe((1.5 * d.rows * (d.rows + 1)) / 2);
      c.close();
    }
  });

  it("serves the replica location, and writes reach it", async () => {
    const primary = client("shared");
    await primary.execute("INSERT INTO items (label, amount) VALUES ('after the upgrade', 1)");
    primary.close();
    // Replication is asynchronous: wait, as a client would, until the replica has the write.
    const wait = await fetch(
      `${shoal.url}/v1/organizations/acme/databases/shared/instances/aws-eu-west-1/wait`,
      { headers: { authorization: `Bearer ${fixture.users.alice}` } },
    );
    expect(wait.status).toBe(200);
    const replica = client("shared", "aws-eu-west-1");
    const r = await replica.execute("SELECT count(*) AS n FROM items");
    expect(Number(r.rows[0]!.n)).toBe(db("shared").rows + 1);
    replica.close();
  });

  it("takes writes, new databases and new tokens", async () => {
    const c = client("vault");
    await c.execute("INSERT INTO items (label, amount) VALUES ('new', 2)");
    expect(Number((await c.execute("SELECT count(*) AS n FROM items")).rows[0]!.n)).toBe(
      db("vault").rows + 1,
    );
    c.close();
    const turso = createApiClient({ org: "acme", token: fixture.users.alice!, baseUrl: `${shoal.url}/v1/` });
    const created = await turso.databases.create("made-after-upgrade", { group: "default" });
    expect(created.name).toBe("made-after-upgrade");
    const token = await turso.databases.createToken("orders");
    const again = createClient({ url: `${shoal.url}/db/acme/orders/`, authToken: token.jwt });
    expect(Number((await again.execute("SELECT count(*) AS n FROM items")).rows[0]!.n)).toBe(
      db("orders").rows,
    );
    again.close();
  });
});
