/**
 * Database and group tokens revoked one by one: the revoked token stops working from its next
 * request, over HTTP and on an open WebSocket; every other token goes on working.
 */
import { createClient } from "@libsql/client";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintToken, pipeline, setupDatabase, sql, type TestDatabase } from "../helpers/dataplane.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let db: TestDatabase;
let sibling: TestDatabase;

const select = (base: string, token: string) => pipeline(base, token, { requests: [sql("select 1")] });
const revokeDb = (body: unknown, name = db.name) =>
  db.user.api.post(`/v1/organizations/${db.org}/databases/${name}/auth/tokens/revoke`, body);
const revokeGroup = (body: unknown) =>
  db.user.api.post(`/v1/organizations/${db.org}/groups/default/auth/tokens/revoke`, body);

beforeAll(async () => {
  h = await startTestShoal();
  db = await setupDatabase(h);
  sibling = await setupDatabase(h, { user: db.user });
});
afterAll(() => h.close());

describe("revoking one database token", () => {
  it("refuses that token on its next request and keeps the database's other tokens working", async () => {
    const doomed = await mintToken(db.user, db.org, db.name);
    const kept = await mintToken(db.user, db.org, db.name, "?authorization=read-only");
    expect((await select(db.urls.httpPath, doomed)).status).toBe(200);
    const r = await revokeDb({ token: doomed });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({ revoked: decodeJwt(doomed).jti });
    const refused = await select(db.urls.httpPath, doomed);
    expect(refused.status).toBe(401);
    expect(JSON.stringify(refused.body)).toContain("AUTH_JWT_REVOKED");
    expect((await select(db.urls.httpPath, kept)).status).toBe(200);
    expect((await select(db.urls.httpPath, db.token)).status).toBe(200);
  });

  it("takes a second revocation of the same token as no error, and an expired token too", async () => {
    const doomed = await mintToken(db.user, db.org, db.name, "?expiration=1h");
    expect((await revokeDb({ token: doomed })).status).toBe(200);
    expect((await revokeDb({ token: doomed })).status).toBe(200);
    expect((await select(db.urls.httpPath, doomed)).status).toBe(401);
  });

  it("takes only the token itself, never a bare id someone could use against another token", async () => {
    const other = await mintToken(db.user, db.org, sibling.name);
    const byId = await revokeDb({ id: decodeJwt(other).jti });
    expect(byId.status).toBe(400);
    expect(byId.body.error).toContain('send the token to revoke as "token"');
    expect((await select(sibling.urls.httpPath, other)).status).toBe(200);
  });

  it("stops an open WebSocket connection's next statement", async () => {
    const doomed = await mintToken(db.user, db.org, db.name);
    const ws = createClient({ url: db.urls.wsPath, authToken: doomed });
    try {
      expect((await ws.execute("select 1 as one")).rows[0]?.one).toBe(1);
      expect((await revokeDb({ token: doomed })).status).toBe(200);
      await expect(ws.execute("select 1")).rejects.toThrow(/revoked/);
    } finally {
      ws.close();
    }
  });

  it("refuses a token of another database, a forged token, and a body without a token", async () => {
    const other = await mintToken(db.user, db.org, sibling.name);
    const wrong = await revokeDb({ token: other });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toContain(`not a token of database ${db.name}`);
    expect((await select(sibling.urls.httpPath, other)).status).toBe(200);
    const [head, payload] = other.split(".");
    const forged = await revokeDb({ token: `${head}.${payload}.c2lnbmF0dXJl` });
    expect(forged.status).toBe(400);
    expect(forged.body.error).toContain("not a database or group token issued by this Shoal");
    expect((await revokeDb({})).status).toBe(400);
    expect((await revokeDb({ token: other }, "no-such-db")).status).toBe(404);
  });

  it("is refused to someone outside the organization", async () => {
    const stranger = await setupDatabase(h);
    const r = await stranger.user.api.post(
      `/v1/organizations/${db.org}/databases/${db.name}/auth/tokens/revoke`,
      { token: db.token },
    );
    expect([403, 404]).toContain(r.status);
    expect((await select(db.urls.httpPath, db.token)).status).toBe(200);
  });

  it("writes an audit entry naming the token id, never the token", async () => {
    const doomed = await mintToken(db.user, db.org, db.name);
    await revokeDb({ token: doomed });
    const log = await db.user.api.get(`/v1/organizations/${db.org}/audit-logs`);
    const entry = log.body.audit_logs.find((e: { code: string }) => e.code === "db-token-revoke");
    expect(entry.data).toEqual({ database: db.name, token_id: decodeJwt(doomed).jti });
    expect(log.text).not.toContain(doomed);
  });
});

describe("revoking one group token", () => {
  it("refuses it on every database of the group, keeping other group tokens", async () => {
    const mint = async () => {
      const r = await db.user.api.post(`/v1/organizations/${db.org}/groups/default/auth/tokens`);
      expect(r.status).toBe(200);
      return r.body.jwt as string;
    };
    const [doomed, kept] = [await mint(), await mint()];
    expect((await select(sibling.urls.httpPath, doomed)).status).toBe(200);
    expect((await revokeGroup({ token: doomed })).status).toBe(200);
    for (const base of [db.urls.httpPath, sibling.urls.httpPath]) {
      expect((await select(base, doomed)).status).toBe(401);
      expect((await select(base, kept)).status).toBe(200);
    }
  });

  it("refuses a database token sent as a group token", async () => {
    const r = await revokeGroup({ token: db.token });
    expect(r.status).toBe(400);
    expect(r.body.error).toContain("not a token of group default");
  });
});
