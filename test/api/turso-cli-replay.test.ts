import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient as createSqlClient } from "@libsql/client";
import Database from "libsql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import "../helpers/dataplane.js";
import { createUser, type TestUser } from "../helpers/factories.js";
import { type Answer, call } from "../helpers/http.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

/**
 * The turso CLI's calls (platform-api.md §6b), replayed over raw HTTP with exactly its headers and
 * bodies: `Content-Type: application/json` on every request (even GET, DELETE and body-less POSTs),
 * bodies from Go's json.Encoder (a trailing newline), capitalised keys where it sends them, and
 * org-less paths when the personal organization is selected. Each step checks the fields the CLI
 * reads from the answer. Every command starts with `GET /v1/auth/validate`.
 */
let h: TestShoal;
let u: TestUser;
let scratch: string;
let team: string;

const CLI_VERSION = "v1.0.11";

/** One CLI request. `body` undefined = empty body, still labelled JSON, as the CLI sends it. */
function cli(method: string, p: string, body?: unknown, token = u.token): Promise<Answer> {
  return call(h.url, method, p, {
    token,
    // fetch can't send a body with GET, and Go's client sends none there either.
    body: body !== undefined ? `${JSON.stringify(body)}\n` : method === "GET" ? undefined : "",
    headers: {
      "content-type": "application/json",
      "user-agent": `turso-cli/${CLI_VERSION} (linux/amd64)`,
      tursocliversion: CLI_VERSION,
    },
  });
}

async function ok(method: string, p: string, body?: unknown): Promise<Answer> {
  const r = await cli(method, p, body);
  expect(r.status, `${method} ${p}: ${r.text}`).toBe(200);
  return r;
}

/** What every CLI command does first. */
async function validate(): Promise<void> {
  const r = await ok("GET", "/v1/auth/validate");
  expect(r.body.exp).toBe(-1);
}

beforeAll(async () => {
  h = await startTestShoal();
  u = await createUser(h);
  scratch = await mkdtemp(path.join(tmpdir(), "shoal-cli-"));
  const r = await u.api.post("/v1/organizations", { name: `Cli ${u.username}` });
  team = r.body.organization.slug;
});
afterAll(async () => {
  await h.close();
  await rm(scratch, { recursive: true, force: true });
});

/** The org prefix as the CLI builds it: none for the personal organization. */
const scopes = [
  { name: "the personal organization (org-less paths)", prefix: () => "/v1" },
  { name: "a team organization", prefix: () => `/v1/organizations/${team}` },
];

describe("turso auth / org commands", () => {
  it("org list: GET /v2/organizations, personal one found by type", async () => {
    await validate();
    const r = await ok("GET", "/v2/organizations");
    for (const o of r.body.organizations) {
      expect(o).toEqual(
        expect.objectContaining({
          id: expect.any(String),
          name: expect.any(String),
          slug: expect.any(String),
          type: expect.stringMatching(/^(personal|team)$/),
          stripe_id: expect.any(String),
          overages: expect.any(Boolean),
        }),
      );
    }
    const personal = r.body.organizations.filter((o: { type: string }) => o.type === "personal");
    expect(personal.map((o: { slug: string }) => o.slug)).toEqual([u.username]);
  });

  it("whoami / login: GET /v1/current-user", async () => {
    const r = await ok("GET", "/v1/current-user");
    expect(r.body.user).toMatchObject({ username: u.username, plan: expect.any(String) });
  });

  it("auto-update check: GET /releases/latest without a token doesn't ask for an update", async () => {
    const r = await call(h.url, "GET", "/releases/latest", {
      headers: { "user-agent": `turso-cli/${CLI_VERSION} (linux/amd64)`, tursocliversion: CLI_VERSION },
    });
    expect(r.status).toBe(200);
    expect(r.body.latest).toBe(CLI_VERSION);
  });
});

for (const scope of scopes) {
  describe(`turso group and db commands in ${scope.name}`, () => {
    const p = (rest: string) => `${scope.prefix()}${rest}`;
    const v2Locations = () =>
      scope.prefix() === "/v1" ? "/v2/locations" : `/v2/organizations/${team}/locations`;

    it("db create with no group: validates the location, creates `default`, waits, creates the database", async () => {
      await validate();
      expect((await ok("GET", p("/groups"))).body.groups).toEqual([]);
      const locations = await ok("GET", v2Locations());
      expect(Object.keys(locations.body.locations.aws)).toContain("aws-us-east-1");
      await ok("POST", p("/groups"), { Name: "default", Location: "aws-us-east-1", Version: "latest" });
      await ok("GET", p("/groups/default/locations/aws-us-east-1/wait"));
      const groups = await ok("GET", p("/groups"));
      expect(groups.body.groups[0]).toMatchObject({
        name: "default",
        primary: "aws-us-east-1",
        locations: ["aws-us-east-1"],
      });
      const db = await ok("POST", p("/databases"), { name: "first", location: "", group: "default" });
      expect(db.body.database).toMatchObject({ Name: "first", Hostname: expect.stringMatching(/^first-/) });
    });

    it("group create --wait, and group locations add --wait with an empty JSON body", async () => {
      await validate();
      await ok("POST", p("/groups"), { Name: "edge", Location: "aws-us-west-2", Version: "" });
      await ok("GET", p("/groups/edge/locations/aws-us-west-2/wait"));
      const before = await ok("GET", p("/groups/edge"));
      expect(before.body.group.locations).toEqual(["aws-us-west-2"]);
      expect(Object.keys((await ok("GET", v2Locations())).body.locations.aws)).toContain("aws-eu-west-1");
      await ok("POST", p("/groups/edge/locations/aws-eu-west-1"));
      await ok("GET", p("/groups/edge/locations/aws-eu-west-1/wait"));
      expect((await ok("GET", p("/groups/edge"))).body.group.locations).toEqual([
        "aws-us-west-2",
        "aws-eu-west-1",
      ]);
    });

    it("db create --group --from-db, with --timestamp, and with seed.value as the CLI names it", async () => {
      await validate();
      await ok("POST", p("/databases"), {
        name: "copy",
        location: "aws-us-east-1",
        group: "default",
        seed: { type: "database", value: "first" },
      });
      const at = new Date().toISOString();
      const restored = await ok("POST", p("/databases"), {
        name: "restored",
        location: "",
        group: "default",
        seed: { type: "database", value: "first", timestamp: at },
      });
      expect(restored.body.database.Name).toBe("restored");
      const older = await cli("POST", p("/databases"), {
        name: "too-old",
        location: "",
        group: "default",
        seed: { type: "database", value: "first", timestamp: "2001-01-01T00:00:00Z" },
      });
      expect(older.status).toBe(400);
      expect(older.body.error).toEqual(expect.any(String));
    });

    it("db create --from-dump: POST /databases/dumps (multipart), then seed {type: dump, url}", async () => {
      const form = new FormData();
      form.append(
        "file",
        new Blob([
          "PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\nCREATE TABLE t (x);\nINSERT INTO t VALUES (42);\nCOMMIT;\n",
        ]),
        "dump.sql",
      );
      const res = await fetch(`${h.url}${p("/databases/dumps")}`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${u.token}`,
          "user-agent": `turso-cli/${CLI_VERSION} (linux/amd64)`,
        },
        body: form,
      });
      expect(res.status).toBe(200);
      const { dump_url } = (await res.json()) as { dump_url: string };
      expect(dump_url).toEqual(expect.any(String));
      await ok("POST", p("/databases"), {
        name: "from-dump",
        location: "",
        group: "default",
        seed: { type: "dump", url: dump_url },
      });
      const { jwt } = (await ok("POST", p("/databases/from-dump/auth/tokens?expiration=5m"), {})).body;
      const hostname = (await ok("GET", p("/databases/from-dump"))).body.database.Hostname;
      const sql = createSqlClient({ url: `http://${hostname}:${new URL(h.url).port}`, authToken: jwt });
      expect((await sql.execute("SELECT x FROM t")).rows[0]?.x).toBe(42);
      sql.close();
    });

    it("db create --from-file on an aws- primary: seed database_upload, a 5-minute token, chunked upload", async () => {
      await validate();
      const created = await ok("POST", p("/databases"), {
        name: "uploaded",
        location: "",
        group: "default",
        seed: { type: "database_upload" },
      });
      const hostname = created.body.database.Hostname as string;
      const { jwt } = (await ok("POST", p("/databases/uploaded/auth/tokens?expiration=5m"), {})).body;
      const file = path.join(scratch, `${scope.name.length}.db`);
      const local = new Database(file);
      local.exec(
        "PRAGMA page_size = 4096; PRAGMA journal_mode = WAL; CREATE TABLE u (v); INSERT INTO u VALUES ('up');",
      );
      local.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      local.close();
      const bytes = readFileSync(file);
      const host = `http://${hostname}:${new URL(h.url).port}`;
      const put = (url: string, body?: string | Buffer) =>
        fetch(`${host}${url}`, { method: "PUT", headers: { authorization: `Bearer ${jwt}` }, body });
      const start = await put("/v2/upload/start", JSON.stringify({ db_size_bytes: bytes.length }));
      expect(start.status).toBe(200);
      const { upload_id: id } = (await start.json()) as { upload_id: string };
      expect((await put(`/v2/upload/${id}/chunk/0`, bytes)).status).toBe(200);
      expect((await put(`/v2/upload/${id}/finalize`)).status).toBe(200);
      const sql = createSqlClient({ url: host, authToken: jwt });
      expect((await sql.execute("SELECT v FROM u")).rows[0]?.v).toBe("up");
      sql.close();
    });

    it("db list pages with limit and cursor until pagination.next is absent", async () => {
      await validate();
      const names: string[] = [];
      let cursor: string | null = null;
      do {
        const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : "";
        const r = await ok("GET", p(`/databases?limit=2${q}`));
        for (const d of r.body.databases) {
          expect(d).toEqual(
            expect.objectContaining({
              Name: expect.any(String),
              DbId: expect.any(String),
              group: expect.any(String),
              Hostname: expect.any(String),
            }),
          );
          // The CLI labels a database "Turso" when byte 6 of its UUID is 0x10; Shoal's are libSQL.
          expect(d.DbId.replace(/-/g, "").slice(12, 14)).not.toBe("10");
          names.push(d.Name);
        }
        cursor = r.body.pagination?.next ?? null;
      } while (cursor);
      expect(names).toEqual([...names].sort());
      expect(names).toEqual(expect.arrayContaining(["copy", "first", "from-dump", "uploaded"]));
      const all = await ok("GET", p("/databases?limit=1000&group=default"));
      expect(all.body.databases.length).toBe(names.length);
    });

    it("db show: the whole list, configuration, instances and usage", async () => {
      await validate();
      const list = await ok("GET", p("/databases"));
      const db = list.body.databases.find((d: { Name: string }) => d.Name === "first");
      expect(db).toMatchObject({
        Name: "first",
        Hostname: expect.any(String),
        DbId: expect.any(String),
        group: "default",
        version: expect.any(String),
        regions: ["aws-us-east-1"],
        primaryRegion: "aws-us-east-1",
        sleeping: false,
        is_schema: false,
        schema: expect.any(String),
      });
      expect("parent" in db).toBe(true);
      const copy = list.body.databases.find((d: { Name: string }) => d.Name === "copy");
      expect(copy.parent.name).toBe("first");
      const config = await ok("GET", p("/databases/first/configuration"));
      expect(config.body).toMatchObject({ delete_protection: false });
      expect(config.body).toHaveProperty("allowed_ips");
      const instances = await ok("GET", p("/databases/first/instances"));
      expect(instances.body.instances[0]).toMatchObject({
        name: "aws-us-east-1",
        type: "primary",
        region: "aws-us-east-1",
        hostname: expect.any(String),
      });
      const usage = await ok("GET", p("/databases/first/usage"));
      expect(usage.body.database.uuid).toBe(db.DbId);
      expect(usage.body.database.usage).toMatchObject({
        storage_bytes: expect.any(Number),
        bytes_synced: expect.any(Number),
      });
    });

    it("db tokens create: -e 7d -r, --attach, and --group", async () => {
      await validate();
      await ok("GET", p("/databases"));
      const ro = await ok(
        "POST",
        p("/databases/first/auth/tokens?expiration=7d&authorization=read-only"),
        {},
      );
      expect(ro.body.jwt.split(".")).toHaveLength(3);
      const attach = await ok("POST", p("/databases/first/auth/tokens?expiration=never"), {
        permissions: { read_attach: { databases: ["copy"] } },
      });
      expect(attach.body.jwt).toEqual(expect.any(String));
      const group = await ok("POST", p("/groups/default/auth/tokens?expiration=2d"), {});
      expect(group.body.jwt).toEqual(expect.any(String));
      const bad = await cli("POST", p("/databases/first/auth/tokens?expiration=soon"), {});
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatch(
        /^Invalid expiration format: "soon"; use never, or a duration .* units w, d, h, m, s, ms, us or ns/,
      );
    });
  });
}

describe("turso auth api-tokens mint", () => {
  it("unrestricted (no body), --org, and --org --group --scope through /v2/auth/api-tokens", async () => {
    await validate();
    const plain = await cli("POST", "/v2/auth/api-tokens/cli-plain");
    expect(plain.status, plain.text).toBe(200);
    expect(plain.body.token).toEqual({
      name: "cli-plain",
      id: expect.any(String),
      value: expect.any(String),
    });

    const orgs = await ok("GET", "/v2/organizations");
    expect(orgs.body.organizations.map((o: { slug: string }) => o.slug)).toContain(team);
    const orgToken = await ok("POST", "/v2/auth/api-tokens/cli-org", { organization: team });
    expect(orgToken.body.token.value).toEqual(expect.any(String));

    await ok("GET", `/v1/organizations/${team}/groups/default`);
    const scoped = await ok("POST", "/v2/auth/api-tokens/cli-scoped", {
      organization: team,
      group: "default",
      scopes: ["read"],
    });
    const value = scoped.body.token.value as string;
    expect((await cli("GET", `/v1/organizations/${team}/databases`, undefined, value)).status).toBe(200);
    const refused = await cli(
      "POST",
      `/v1/organizations/${team}/databases`,
      { name: "nope", location: "", group: "default" },
      value,
    );
    expect(refused.status).toBe(403);
  });

  it("logout --all: POST /v1/auth/invalidate answers validFrom and the calling token stops working", async () => {
    const t = (await u.api.post("/v1/auth/api-tokens/cli-session")).body.token as string;
    const r = await cli("POST", "/v1/auth/invalidate", undefined, t);
    expect(r.status, r.text).toBe(200);
    expect(r.body.validFrom).toEqual(expect.any(Number));
    expect((await cli("GET", "/v1/auth/validate", undefined, t)).status).toBe(401);
    expect((await cli("GET", "/v1/auth/validate")).status).toBe(200);
  });
});
