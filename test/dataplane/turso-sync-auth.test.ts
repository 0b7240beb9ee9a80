import { createClient } from "@libsql/client";
import { connect } from "@tursodatabase/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintToken, setupDatabase, type TestDatabase } from "../helpers/dataplane.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";
import { localFolder, localRows, pullRaw } from "../helpers/turso-sync.js";

let h: TestShoal;
let db: TestDatabase;
let url: string;
let folder: Awaited<ReturnType<typeof localFolder>>;

beforeAll(async () => {
  h = await startTestShoal();
  folder = await localFolder();
  db = await setupDatabase(h);
  url = `${h.url}/db/${db.org}/${db.name}`;
  const remote = createClient({ url: db.urls.httpPath, authToken: db.token });
  await remote.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)");
  await remote.execute("INSERT INTO notes (body) VALUES ('first')");
});
afterAll(async () => {
  await h.close();
  await folder.cleanup();
});

const remoteCount = async () => {
  const remote = createClient({ url: db.urls.httpPath, authToken: db.token });
  return (await remote.execute("SELECT count(*) AS n FROM notes")).rows[0]!.n;
};

describe("who may pull and push through @tursodatabase/sync", () => {
  it("lets a read-only token pull but not push, and the refused push changes nothing", async () => {
    const ro = await mintToken(db.user, db.org, db.name, "?authorization=read-only");
    const local = await connect({ path: folder.file("ro.db"), url, authToken: ro });
    expect(await localRows(local, "SELECT body FROM notes")).toEqual([{ body: "first" }]);
    await createClient({ url: db.urls.httpPath, authToken: db.token }).execute(
      "INSERT INTO notes (body) VALUES ('new')",
    );
    expect(await local.pull()).toBe(true);
    await local.exec("INSERT INTO notes (body) VALUES ('not allowed')");
    const refused = await local.push().then(
      () => undefined,
      (e: Error) => e,
    );
    expect(refused?.message).toMatch(/FORBIDDEN/);
    expect(await remoteCount()).toBe(2);
    // The refused push left no transaction behind: a writer gets the database at once.
    await createClient({ url: db.urls.httpPath, authToken: db.token }).execute(
      "DELETE FROM notes WHERE body = 'new'",
    );
    const leftovers = await createClient({ url: db.urls.httpPath, authToken: db.token }).execute(
      "SELECT count(*) AS n FROM sqlite_schema WHERE name = 'turso_sync_last_change_id'",
    );
    expect(leftovers.rows[0]!.n).toBe(0);
    await local.close();
  });

  it("refuses a token of another database with 403, and no token or a rotated one with 401", async () => {
    const other = await setupDatabase(h, { user: db.user });
    await expect(connect({ path: folder.file("other.db"), url, authToken: other.token })).rejects.toThrow(
      /status=403/,
    );
    const mismatch = await pullRaw(url, other.token);
    expect(mismatch.status).toBe(403);
    expect(mismatch.error?.code).toBe("AUTH_DATABASE_MISMATCH");
    expect((await pullRaw(url, undefined)).status).toBe(401);

    const doomed = await mintToken(db.user, db.org, db.name);
    const local = await connect({ path: folder.file("rotated.db"), url, authToken: doomed });
    await db.user.api.post(`/v1/organizations/${db.org}/databases/${db.name}/auth/rotate`);
    await expect(local.pull()).rejects.toThrow(/status=401/);
    await local.close();
    db.token = await mintToken(db.user, db.org, db.name);
  });

  it("refuses pulls while the database's reads are blocked", async () => {
    const blocked = await setupDatabase(h, { user: db.user });
    const path = `/v1/organizations/${db.org}/databases/${blocked.name}/configuration`;
    expect((await db.user.api.patch(path, { block_reads: true })).status).toBe(200);
    const r = await pullRaw(`${h.url}/db/${db.org}/${blocked.name}`, blocked.token);
    expect(r.status).toBe(403);
    expect(r.error?.code).toBe("BLOCKED");
  });
});
