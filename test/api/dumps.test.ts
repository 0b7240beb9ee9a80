import { readdirSync } from "node:fs";
import path from "node:path";
import { createClient, type Client as SqlClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintToken } from "../helpers/dataplane.js";
import { addMember, createGroup, createTeam, createUser, type TestUser } from "../helpers/factories.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let u: TestUser;
let org: string;
const opened: SqlClient[] = [];
const dbs = () => `/v1/organizations/${org}/databases`;

const DUMP = `PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO people VALUES(1,'Ada');
INSERT INTO people VALUES(2,'Grace; Hopper');
CREATE INDEX people_name ON people (name);
COMMIT;
`;

beforeAll(async () => {
  h = await startTestShoal();
  u = await createUser(h);
  org = u.username;
  await createGroup(u, org, "default");
});
afterAll(async () => {
  for (const c of opened) c.close();
  await h.close();
});

/** Uploads a dump the way the turso CLI does: multipart/form-data, field `file`. */
async function upload(text: string, token = u.token, at = `${dbs()}/dumps`, field = "file") {
  const form = new FormData();
  form.append("note", "ignored");
  form.append(field, new Blob([text]), "dump.sql");
  const res = await fetch(h.url + at, {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  return {
    status: res.status,
    body: (await res.json()) as { dump_url: string; expires_at: string; error: string },
  };
}

async function rows(name: string): Promise<unknown[]> {
  const c = createClient({ url: `${h.url}/db/${org}/${name}/`, authToken: await mintToken(u, org, name) });
  opened.push(c);
  return (await c.execute("SELECT id, name FROM people ORDER BY id")).rows.map((r) => [r.id, r.name]);
}

function dumpFiles(): string[] {
  try {
    return readdirSync(path.join(h.dataDir, "dumps"));
  } catch {
    return [];
  }
}

describe("POST .../databases/dumps and seed type dump", () => {
  it("stores a multipart upload and answers a dump URL of this server", async () => {
    const r = await upload(DUMP);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.dump_url).toMatch(
      new RegExp(`^${h.url}/v1/organizations/${org}/databases/dumps/[A-Za-z0-9_-]{22}$`),
    );
    expect(Date.parse(r.body.expires_at)).toBeGreaterThan(Date.now());
  });

  it("creates a database from the dump, and deletes the dump once used", async () => {
    const { body } = await upload(DUMP);
    const r = await u.api.post(dbs(), {
      name: "from-dump",
      group: "default",
      seed: { type: "dump", url: body.dump_url },
    });
    expect(r.status, r.text).toBe(200);
    expect(await rows("from-dump")).toEqual([
      [1, "Ada"],
      [2, "Grace; Hopper"],
    ]);
    const again = await u.api.post(dbs(), {
      name: "from-dump-2",
      group: "default",
      seed: { type: "dump", url: body.dump_url },
    });
    expect(again.status).toBe(400);
    expect(again.body.error).toMatch(/doesn't exist or has expired/);
  });

  it("answers on the personal-organization path the CLI uses", async () => {
    const r = await upload(DUMP, u.token, "/v1/databases/dumps");
    expect(r.status).toBe(200);
    expect(r.body.dump_url).toContain(`/v1/organizations/${org}/databases/dumps/`);
    const created = await u.api.post("/v1/databases", {
      name: "personal-dump",
      group: "default",
      seed: { type: "dump", url: r.body.dump_url },
    });
    expect(created.status, created.text).toBe(200);
    expect(await rows("personal-dump")).toHaveLength(2);
  });

  it("creates nothing when the dump fails, says which statement failed, and keeps the dump", async () => {
    const { body } = await upload(
      "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT);\nINSERT INTO nowhere VALUES (1);\n",
    );
    const before = readdirSync(path.join(h.dataDir, "locations", "aws-us-east-1")).filter((f) =>
      f.endsWith(".db"),
    );
    const r = await u.api.post(dbs(), {
      name: "broken",
      group: "default",
      seed: { type: "dump", url: body.dump_url },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(
      /statement 2 \(INSERT INTO nowhere VALUES \(1\)\) failed: no such table: nowhere/,
    );
    expect((await u.api.get(`${dbs()}/broken`)).status).toBe(404);
    const after = readdirSync(path.join(h.dataDir, "locations", "aws-us-east-1")).filter((f) =>
      f.endsWith(".db"),
    );
    expect(after).toEqual(before);
    const retry = await u.api.post(dbs(), {
      name: "broken",
      group: "default",
      seed: { type: "dump", url: body.dump_url },
    });
    expect(retry.body.error).toMatch(/statement 2/);
  });

  it("refuses dumps that reach outside the database, such as ATTACH", async () => {
    const { body } = await upload("ATTACH DATABASE '/etc/passwd' AS p;\n");
    const r = await u.api.post(dbs(), {
      name: "attacher",
      group: "default",
      seed: { type: "dump", url: body.dump_url },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/ATTACH and DETACH are not allowed in a dump/);
  });

  it("never fetches a URL it didn't hand out, and says why", async () => {
    for (const url of [
      "http://169.254.169.254/latest/meta-data/",
      "https://example.com/dump.sql",
      "file:///etc/passwd",
      "not a url",
    ]) {
      const r = await u.api.post(dbs(), { name: "ssrf", group: "default", seed: { type: "dump", url } });
      expect(r.status, url).toBe(400);
      expect(r.body.error).toMatch(/doesn't download dumps from other addresses/);
    }
    const { body } = await upload(DUMP);
    const elsewhere = body.dump_url.replace(new URL(h.url).host, "evil.example:80");
    const r = await u.api.post(dbs(), {
      name: "ssrf",
      group: "default",
      seed: { type: "dump", url: elsewhere },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/points to another server/);
  });

  it("treats another organization's dump as unknown", async () => {
    const other = await createUser(h);
    await createGroup(other, other.username, "default");
    const { body } = await upload(DUMP, other.token, `/v1/organizations/${other.username}/databases/dumps`);
    const r = await u.api.post(dbs(), {
      name: "theirs",
      group: "default",
      seed: { type: "dump", url: body.dump_url },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/belongs to another organization/);
    const swapped = body.dump_url.replace(`/organizations/${other.username}/`, `/organizations/${org}/`);
    const s = await u.api.post(dbs(), {
      name: "theirs",
      group: "default",
      seed: { type: "dump", url: swapped },
    });
    expect(s.status).toBe(400);
    expect(s.body.error).toMatch(/doesn't exist or has expired/);
  });

  it("refuses bodies that aren't a multipart file, and empty dumps, keeping nothing", async () => {
    const before = dumpFiles();
    const raw = await u.api.post(`${dbs()}/dumps`, DUMP, { contentType: "application/sql" });
    expect(raw.status).toBe(400);
    expect(raw.body.error).toMatch(/multipart\/form-data, in a field named file/);
    const wrongField = await upload(DUMP, u.token, `${dbs()}/dumps`, "data");
    expect(wrongField.status).toBe(400);
    expect(wrongField.body.error).toMatch(/no field named file/);
    const empty = await upload("");
    expect(empty.status).toBe(400);
    expect(empty.body.error).toMatch(/the dump is empty/);
    expect(dumpFiles()).toEqual(before);
  });

  it("answers a 400, not a 500, for a dump URL with a malformed escape", async () => {
    const { body } = await upload(DUMP);
    const url = body.dump_url.replace(`/organizations/${org}/`, "/organizations/%zz/");
    const r = await u.api.post(dbs(), { name: "escaped", group: "default", seed: { type: "dump", url } });
    expect(r.status, r.text).toBe(400);
    expect(r.body.error).toMatch(/belongs to another organization/);
  });

  it("refuses a body with no multipart boundary near its start without reading it all", async () => {
    const r = await u.api.post(`${dbs()}/dumps`, "x".repeat(200_000), {
      contentType: "multipart/form-data; boundary=never-there",
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/no multipart boundary/);
  });

  it("gives the second of two creates from one dump a 400, never a 500", async () => {
    const { body } = await upload(DUMP);
    const seed = { type: "dump", url: body.dump_url };
    const answers = await Promise.all([
      u.api.post(dbs(), { name: "twin-a", group: "default", seed }),
      u.api.post(dbs(), { name: "twin-b", group: "default", seed }),
    ]);
    const statuses = answers.map((a) => a.status).sort();
    expect(
      statuses.filter((s) => s >= 500),
      answers.map((a) => a.text).join("\n"),
    ).toEqual([]);
    expect(statuses).toContain(200);
  });

  it("refuses a seed url missing from a dump seed", async () => {
    const r = await u.api.post(dbs(), { name: "no-url", group: "default", seed: { type: "dump" } });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/needs seed.url/);
  });

  it("refuses a viewer, who can't create databases", async () => {
    const team = await createTeam(u);
    const viewer = await createUser(h);
    await addMember(u, team, viewer.username, "viewer");
    const r = await upload(DUMP, viewer.token, `/v1/organizations/${team}/databases/dumps`);
    expect(r.status).toBe(403);
  });
});
