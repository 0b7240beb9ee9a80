import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  databaseUrls,
  mintToken,
  pipeline,
  setupDatabase,
  sql,
  type TestDatabase,
} from "../helpers/dataplane.js";
import { createGroup } from "../helpers/factories.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let db: TestDatabase;

beforeAll(async () => {
  h = await startTestShoal();
  db = await setupDatabase(h);
  await createClient({ url: db.urls.httpPath, authToken: db.token }).execute("CREATE TABLE t (v TEXT)");
});
afterAll(() => h.close());

const claims = (jwt: string) => JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString());
const canRead = async (url: string, token: string) => {
  const r = await pipeline(url, token, { requests: [sql("SELECT 1"), { type: "close" }] });
  return r.status === 200 ? "ok" : r.body.code;
};

describe("database tokens", () => {
  it("are EdDSA JWTs carrying the claims sqld reads", async () => {
    const jwt = await mintToken(db.user, db.org, db.name, "?expiration=1h&authorization=read-only");
    const header = JSON.parse(Buffer.from(jwt.split(".")[0]!, "base64url").toString());
    expect(header.alg).toBe("EdDSA");
    const c = claims(jwt);
    expect(c).toMatchObject({ a: "ro", id: db.id });
    expect(c.exp - c.iat).toBe(3600);
    expect(claims(db.token).exp).toBeUndefined();
  });

  it("refuses bad expirations and authorizations with Turso's message", async () => {
    const base = `/v1/organizations/${db.org}/databases/${db.name}/auth/tokens`;
    for (const q of ["?expiration=tomorrow", "?expiration=5x", "?expiration=0s"]) {
      const r = await db.user.api.post(`${base}${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.error).toMatch(/^Invalid expiration format/);
    }
    const year = await db.user.api.post(`${base}?expiration=1y`);
    expect(year.status).toBe(400);
    expect(year.body.error).toBe(
      'Invalid expiration format: "1y"; use never, or a duration of whole numbers with units w, d, h, m, s, ' +
        "ms, us or ns, such as 2w, 1d, 12h, 30m or 1h30m (there is no unit for months or years: use 4w or 52w)",
    );
    expect((await db.user.api.post(`${base}?authorization=admin`)).status).toBe(400);
    for (const q of ["?expiration=never", "?expiration=2w1d", "?expiration=30m", "?"]) {
      expect((await db.user.api.post(`${base}${q}`)).status, q).toBe(200);
    }
  });

  it("lets a read-only token read but not write, statement by statement", async () => {
    const ro = await mintToken(db.user, db.org, db.name, "?authorization=read-only");
    const c = createClient({ url: db.urls.httpPath, authToken: ro });
    expect((await c.execute("SELECT count(*) AS n FROM t")).rows[0]!.n).toBe(0);
    await expect(c.execute("INSERT INTO t VALUES ('no')")).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(c.execute("CREATE TABLE sneaky (x)")).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(c.batch(["SELECT 1", "DELETE FROM t"], "write")).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    // A "write" transaction still opens for reading, as on sqld.
    const tx = await c.transaction("write");
    await tx.execute("SELECT * FROM t");
    await expect(tx.execute("UPDATE t SET v = 'no'")).rejects.toMatchObject({ code: "FORBIDDEN" });
    tx.close();
    // SQLite itself refuses too: the connection is query-only for this token.
    await expect(c.execute("PRAGMA query_only = 0")).rejects.toMatchObject({ code: "SQL_PARSE_ERROR" });
    c.close();
    const rw = createClient({ url: db.urls.httpPath, authToken: db.token });
    expect((await rw.execute("SELECT count(*) AS n FROM t")).rows[0]!.n).toBe(0);
  });

  it("read-only over WebSocket too", async () => {
    const ro = await mintToken(db.user, db.org, db.name, "?authorization=read-only");
    const c = createClient({ url: db.urls.wsPath, authToken: ro });
    await c.execute("SELECT 1");
    await expect(c.execute("INSERT INTO t VALUES ('no')")).rejects.toMatchObject({ code: "FORBIDDEN" });
    c.close();
  });

  it("expire when their expiration passes", async () => {
    const short = await mintToken(db.user, db.org, db.name, "?expiration=1s");
    expect(await canRead(db.urls.httpPath, short)).toBe("ok");
    await new Promise((r) => setTimeout(r, 1600));
    expect(await canRead(db.urls.httpPath, short)).toBe("AUTH_JWT_EXPIRED");
  });
});

describe("a token that isn't a database token", () => {
  it("gets a hint to mint a database token, and says when it is an API token", async () => {
    for (const [token, start] of [
      [db.user.token, "the token is an API token, which manages the service but opens no database"],
      ["not-a-jwt", "the token is not a valid database token"],
    ] as const) {
      const r = await pipeline(db.urls.httpPath, token, { requests: [sql("SELECT 1")] });
      expect(r.status).toBe(401);
      expect(r.body.code).toBe("AUTH_JWT_INVALID");
      expect(r.body.message).toBe(
        `${start}: mint a database token with POST /v1/organizations/{org}/databases/{db}/auth/tokens (turso db tokens create <db>)`,
      );
    }
    const client = createClient({ url: db.urls.wsPath, authToken: db.user.token });
    await expect(client.execute("SELECT 1")).rejects.toThrow(/is an API token/);
    client.close();
  });
});

describe("group tokens", () => {
  it("open every database of the group, including ones created later, and nothing else", async () => {
    const a = await setupDatabase(h, { user: db.user, group: "team" });
    const r = await db.user.api.post(`/v1/organizations/${db.org}/groups/team/auth/tokens`);
    expect(r.status).toBe(200);
    const groupToken = r.body.jwt as string;
    expect(claims(groupToken)).toMatchObject({ a: "rw", gid: expect.any(String) });
    expect(await canRead(a.urls.httpPath, groupToken)).toBe("ok");
    const later = await setupDatabase(h, { user: db.user, group: "team" });
    expect(await canRead(later.urls.httpPath, groupToken)).toBe("ok");
    expect(await canRead(db.urls.httpPath, groupToken)).toBe("AUTH_DATABASE_MISMATCH");
  });
});

describe("rotation", () => {
  it("cuts off every earlier token of a database and no other", async () => {
    await createGroup(db.user, db.org, "rot");
    const target = await setupDatabase(h, { user: db.user, group: "rot" });
    const sibling = await setupDatabase(h, { user: db.user, group: "rot" });
    const oldRo = await mintToken(db.user, db.org, target.name, "?authorization=read-only");
    const groupToken = (await db.user.api.post(`/v1/organizations/${db.org}/groups/rot/auth/tokens`)).body
      .jwt;
    const ws = createClient({ url: target.urls.wsPath, authToken: target.token });
    await ws.execute("SELECT 1");

    const r = await db.user.api.post(`/v1/organizations/${db.org}/databases/${target.name}/auth/rotate`);
    expect(r).toMatchObject({ status: 200, body: {} });

    expect(await canRead(target.urls.httpPath, target.token)).toBe("AUTH_JWT_REVOKED");
    expect(await canRead(target.urls.httpPath, oldRo)).toBe("AUTH_JWT_REVOKED");
    // An open WebSocket is cut off at its next request.
    await expect(ws.execute("SELECT 1")).rejects.toMatchObject({ code: "AUTH_JWT_REVOKED" });
    ws.close();
    expect(await canRead(sibling.urls.httpPath, sibling.token)).toBe("ok");
    expect(await canRead(target.urls.httpPath, groupToken)).toBe("ok");
    const fresh = await mintToken(db.user, db.org, target.name);
    expect(await canRead(target.urls.httpPath, fresh)).toBe("ok");
  });

  it("of a group cuts off its group tokens and its databases' tokens, and no other group's", async () => {
    await createGroup(db.user, db.org, "rot2");
    const inGroup = await setupDatabase(h, { user: db.user, group: "rot2" });
    const elsewhere = await setupDatabase(h, { user: db.user, group: "default" });
    const groupToken = (await db.user.api.post(`/v1/organizations/${db.org}/groups/rot2/auth/tokens`)).body
      .jwt;
    expect((await db.user.api.post(`/v1/organizations/${db.org}/groups/rot2/auth/rotate`)).status).toBe(200);
    expect(await canRead(inGroup.urls.httpPath, groupToken)).toBe("AUTH_JWT_REVOKED");
    expect(await canRead(inGroup.urls.httpPath, inGroup.token)).toBe("AUTH_JWT_REVOKED");
    expect(await canRead(elsewhere.urls.httpPath, elsewhere.token)).toBe("ok");
    const fresh = (await db.user.api.post(`/v1/organizations/${db.org}/groups/rot2/auth/tokens`)).body.jwt;
    expect(await canRead(inGroup.urls.httpPath, fresh)).toBe("ok");
  });

  it("answers 404 for unknown databases and groups", async () => {
    expect((await db.user.api.post(`/v1/organizations/${db.org}/databases/ghost/auth/rotate`)).status).toBe(
      404,
    );
    expect((await db.user.api.post(`/v1/organizations/${db.org}/groups/ghost/auth/rotate`)).status).toBe(404);
    expect((await db.user.api.post(`/v1/organizations/${db.org}/databases/ghost/auth/tokens`)).status).toBe(
      404,
    );
  });
});

describe("tokens and hostnames", () => {
  it("route by hostname with any port and keep the token check", async () => {
    const urls = databaseUrls(h, db.org, db.name, db.hostname);
    expect(await canRead(`${urls.httpHost}/`, db.token)).toBe("ok");
    const other = await setupDatabase(h);
    expect(await canRead(`${urls.httpHost}/`, other.token)).toBe("AUTH_DATABASE_MISMATCH");
  });
});
