import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintToken, setupDatabase } from "../helpers/dataplane.js";
import { createGroup, createUser } from "../helpers/factories.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;

beforeAll(async () => {
  h = await startTestShoal({ maxConnections: 6 });
});
afterAll(() => h.close());

describe("many databases on one node", () => {
  it("keeps open connections within SHOAL_MAX_CONNECTIONS however many databases are used", async () => {
    const first = await setupDatabase(h);
    const names = [first.name];
    for (let i = 0; i < 24; i++) names.push((await setupDatabase(h, { user: first.user })).name);
    for (const name of names) {
      const token = await mintToken(first.user, first.org, name);
      const c = createClient({ url: `${h.url}/db/${first.org}/${name}/`, authToken: token });
      await c.execute("CREATE TABLE t (x)");
      await c.execute("INSERT INTO t VALUES (1)");
      c.close();
      expect((await h.shoal.deps.shards.stats()).open).toBeLessThanOrEqual(6);
    }
    // Every database still answers, reopened on demand.
    const token = await mintToken(first.user, first.org, names[0]!);
    const again = createClient({ url: `${h.url}/db/${first.org}/${names[0]}/`, authToken: token });
    expect((await again.execute("SELECT count(*) AS n FROM t")).rows[0]!.n).toBe(1);
  });

  it("refuses a database whose hostname another organization's database already has", async () => {
    // "a-b" in organization "c" and "a" in organization "b-c" would both be a-b-c.<domain>.
    const admin = await createUser(h, "c");
    const other = await createUser(h, "b-c");
    await createGroup(admin, "c");
    await createGroup(other, "b-c");
    expect(
      (await admin.api.post("/v1/organizations/c/databases", { name: "a-b", group: "default" })).status,
    ).toBe(200);
    const clash = await other.api.post("/v1/organizations/b-c/databases", { name: "a", group: "default" });
    expect(clash.status).toBe(409);
    expect(clash.body.error).toBe("database name a is not available: the hostname a-b-c.shoal.test is taken");
  });
});
