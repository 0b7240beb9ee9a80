import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createClient as createSqlClient } from "@libsql/client";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  addMember,
  createDatabase,
  createGroup,
  createTeam,
  createUser,
  type TestUser,
} from "../helpers/factories.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

/**
 * Sign-in with the application's own identity provider: an organization trusts a key set, and
 * tokens signed with its keys open the databases their claims name. The provider is a local HTTP
 * server serving a JSON Web Key Set; its tokens go to Shoal through @libsql/client.
 */
let h: TestShoal;
let owner: TestUser;
let member: TestUser;
type KeyLike = Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];
let team: string;
let idp: Server;
let idpUrl: string;
const ISSUER = "https://idp.example";
/** What the provider serves at /jwks.json; tests change it to rotate keys. */
let served: JWK[] = [];
const keys: Record<string, { privateKey: KeyLike; jwk: JWK }> = {};
const dbs: Record<string, { id: string; url: string }> = {};
const jwks = (name = "") => `/v2/organizations/${team}/jwks${name ? `/${name}` : ""}`;

async function makeKey(kid: string, alg: "RS256" | "EdDSA") {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  keys[kid] = { privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: "sig" } };
}

function sign(
  kid: string,
  claims: Record<string, unknown>,
  opts: { iss?: string; exp?: string; aud?: string } = {},
) {
  const k = keys[kid]!;
  let jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: String(k.jwk.alg), kid })
    .setIssuedAt()
    .setIssuer(opts.iss ?? ISSUER)
    .setExpirationTime(opts.exp ?? "1h");
  if (opts.aud) jwt = jwt.setAudience(opts.aud);
  return jwt.sign(k.privateKey);
}

/** A GET with a JSON body, as the turso CLI (Go) sends `jwks-template`; fetch can't send one. */
function getWithBody(path: string, body: unknown): Promise<{ status: number; body: any }> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(`${h.url}${path}`, {
      method: "GET",
      headers: {
        authorization: `Bearer ${owner.token}`,
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(text)),
      },
    });
    req.on("response", (res) => {
      let answer = "";
      res.on("data", (c) => {
        answer += c;
      });
      res.on("end", () => {
        try {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(answer) });
        } catch (e) {
          reject(e);
        }
      });
    });
    req.on("error", reject);
    req.end(text);
  });
}

async function sql(db: string, token: string, statement: string, ws = false) {
  const url = ws ? dbs[db]!.url.replace(/^http/, "ws") : dbs[db]!.url;
  const c = createSqlClient({ url, authToken: token });
  try {
    return await c.execute(statement);
  } finally {
    c.close();
  }
}

beforeAll(async () => {
  await makeKey("k1", "RS256");
  await makeKey("k2", "EdDSA");
  await makeKey("stranger", "RS256");
  served = [keys.k1!.jwk];
  idp = createServer((req, res) => {
    const answers: Record<string, [number, string]> = {
      "/jwks.json": [200, JSON.stringify({ keys: served })],
      "/junk": [200, "<html>sign in</html>"],
      "/empty": [200, JSON.stringify({ keys: [] })],
      "/private": [200, JSON.stringify({ keys: [{ ...keys.k1!.jwk, d: "secret" }] })],
      "/gone": [404, "not here"],
      "/huge": [200, JSON.stringify({ keys: served, pad: "x".repeat(300 * 1024) })],
    };
    if (req.url === "/moved") return void res.writeHead(302, { location: "/jwks.json" }).end();
    const [status, body] = answers[req.url ?? ""] ?? [404, ""];
    res.writeHead(status, { "content-type": "application/json" }).end(body);
  });
  await new Promise<void>((resolve) => idp.listen(0, "127.0.0.1", resolve));
  idpUrl = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;

  h = await startTestShoal();
  owner = await createUser(h);
  member = await createUser(h);
  team = await createTeam(owner);
  await addMember(owner, team, member.username, "member");
  await createGroup(owner, team, "default", "aws-us-east-1");
  await createGroup(owner, team, "other", "aws-us-east-1");
  for (const [name, group] of [
    ["alpha", "default"],
    ["beta", "default"],
    ["gamma", "other"],
  ] as const) {
    const d = await createDatabase(owner, team, name, group);
    const got = await owner.api.get(`/v1/organizations/${team}/databases/${name}`);
    dbs[name] = { id: d.DbId, url: got.body.database.http_url };
  }
  const mint = await owner.api.post(`/v1/organizations/${team}/databases/alpha/auth/tokens`);
  await sql("alpha", mint.body.jwt, "CREATE TABLE t (x)");
  const put = await owner.api.put(jwks("idp"), {
    jwks_url: `${idpUrl}/jwks.json`,
    region: "",
    issuer: ISSUER,
  });
  expect(put.status, put.text).toBe(200);
});
afterAll(async () => {
  await h.close();
  idp.close();
});

describe("managing trusted key sets", () => {
  it("lists what was saved, as the turso CLI reads it", async () => {
    const r = await member.api.get(jwks());
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({
      jwks: [{ jwks_name: "idp", jwks_url: `${idpUrl}/jwks.json`, issuer: ISSUER, audience: null }],
    });
  });

  it("refuses URLs that don't serve a usable key set, bad names and non-admins, changing nothing", async () => {
    const cases: [string, unknown, number, RegExp][] = [
      ["bad", { jwks_url: `${idpUrl}/junk` }, 400, /doesn't serve a JSON Web Key Set/],
      ["bad", { jwks_url: `${idpUrl}/empty` }, 400, /no public RSA, EC or OKP key/],
      ["bad", { jwks_url: `${idpUrl}/private` }, 400, /private key/],
      ["bad", { jwks_url: `${idpUrl}/gone` }, 400, /answered 404/],
      ["bad", { jwks_url: "http://127.0.0.1:1/jwks.json" }, 400, /could not be fetched/],
      ["bad", { jwks_url: `${idpUrl}/moved` }, 400, /redirects aren't followed/],
      ["bad", { jwks_url: `${idpUrl}/huge` }, 400, /more than 256 KiB/],
      ["bad", { jwks_url: "file:///etc/passwd" }, 400, /https or http/],
      ["bad", {}, 400, /jwks_url/],
      ["no spaces", { jwks_url: `${idpUrl}/jwks.json` }, 400, /invalid key set name/],
    ];
    for (const [name, body, status, message] of cases) {
      const r = await owner.api.put(jwks(encodeURIComponent(name)), body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.body.error).toMatch(message);
    }
    const byMember = await member.api.put(jwks("mine"), { jwks_url: `${idpUrl}/jwks.json` });
    expect(byMember.status).toBe(403);
    expect((await member.api.delete(jwks("idp"))).status).toBe(403);
    expect((await owner.api.delete(jwks("never-saved"))).status).toBe(404);
    expect((await owner.api.get(jwks())).body.jwks.map((s: { jwks_name: string }) => s.jwks_name)).toEqual([
      "idp",
    ]);
  });

  it("gives the claims a provider's template needs, from a JSON body on GET or the query", async () => {
    const byBody = await getWithBody(`/v2/organizations/${team}/jwks-template`, {
      database: "alpha",
      group: null,
      scope: "read-only",
      permissions: [],
    });
    expect(byBody.status, JSON.stringify(byBody.body)).toBe(200);
    expect(byBody.body).toEqual({ template: { a: "ro", id: dbs.alpha!.id, perm: [] } });
    const byQuery = await owner.api.get(`/v2/organizations/${team}/jwks-template?group=other`);
    expect(byQuery.body.template).toEqual({
      a: "rw",
      gid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      perm: [],
    });
    for (const body of [{}, { database: "alpha", group: "other" }, { database: "alpha", scope: "admin" }]) {
      expect((await getWithBody(`/v2/organizations/${team}/jwks-template`, body)).status).toBe(400);
    }
    // The turso CLI sends `-p all:data_read` as a rule with "t": null.
    const perms = {
      database: "alpha",
      permissions: [
        { t: null, a: ["data_read"] },
        { t: ["t"], a: ["data_add"] },
      ],
    };
    const withPerms = await getWithBody(`/v2/organizations/${team}/jwks-template`, perms);
    expect(withPerms.body.template.perm).toEqual([
      { t: null, a: ["data_read"] },
      { t: ["t"], a: ["data_add"] },
    ]);
    const bad = { database: "alpha", permissions: [{ t: ["t"], a: ["data_insert"] }] };
    const refused = await getWithBody(`/v2/organizations/${team}/jwks-template`, bad);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/unknown action "data_insert".*data_add inserts rows/);
    const missing = await owner.api.get(`/v2/organizations/${team}/jwks-template?database=nope`);
    expect(missing.status).toBe(404);
  });
});

describe("where key sets are fetched from", () => {
  it("refuses loopback and private addresses unless the operator allows them", async () => {
    const strict = await startTestShoal({ jwksPrivateAddresses: "refuse" });
    try {
      const u = await createUser(strict);
      for (const url of [
        `${idpUrl}/jwks.json`,
        "http://10.0.0.1/jwks.json",
        "http://[::1]:1/jwks.json",
        "http://169.254.169.254/",
        `${idpUrl.replace("127.0.0.1", "localhost")}/jwks.json`,
      ]) {
        const r = await u.api.put(`/v2/organizations/${u.username}/jwks/idp`, { jwks_url: url });
        expect(r.status, url).toBe(400);
        expect(r.body.error).toMatch(/loopback, private or link-local .*SHOAL_JWKS_PRIVATE_ADDRESSES=allow/);
      }
      expect((await u.api.get(`/v2/organizations/${u.username}/jwks`)).body.jwks).toEqual([]);
    } finally {
      await strict.close();
    }
  });
});

describe("tokens the provider signs", () => {
  it("open exactly the database their id claim names", async () => {
    const token = await sign("k1", { a: "rw", id: dbs.alpha!.id, perm: [] });
    await sql("alpha", token, "INSERT INTO t VALUES (1)");
    expect((await sql("alpha", token, "SELECT count(*) AS n FROM t")).rows[0]?.n).toBe(1);
    // Over WebSocket too.
    expect((await sql("alpha", token, "SELECT count(*) AS n FROM t", true)).rows[0]?.n).toBe(1);
    await expect(sql("beta", token, "SELECT 1", true)).rejects.toThrow(/another database/);
    await expect(sql("beta", token, "SELECT 1")).rejects.toThrow(/another database/);
    await expect(sql("gamma", token, "SELECT 1")).rejects.toThrow(/another database/);
  });

  it("are held to the table-level permissions their perm claim carries", async () => {
    const id = dbs.alpha!.id;
    const token = await sign("k1", { id, perm: [{ t: ["t"], a: ["data_read"] }] });
    expect((await sql("alpha", token, "SELECT count(*) AS n FROM t")).rows[0]?.n).toBeGreaterThan(0);
    await expect(sql("alpha", token, "INSERT INTO t VALUES (3)")).rejects.toThrow(
      /don't allow data_add on table t/,
    );
    const open = await sign("k1", { id, perm: [] });
    expect((await sql("alpha", open, "SELECT 1 AS one")).rows[0]?.one).toBe(1);
  });

  it("open every database of the group a gid claim names, and read-only ones only read", async () => {
    const group = (await owner.api.get(`/v1/organizations/${team}/groups/default`)).body.group.uuid;
    const token = await sign("k1", { a: "ro", gid: group });
    expect((await sql("alpha", token, "SELECT count(*) AS n FROM t")).rows[0]?.n).toBeGreaterThan(0);
    expect((await sql("beta", token, "SELECT 1 AS one")).rows[0]?.one).toBe(1);
    await expect(sql("alpha", token, "INSERT INTO t VALUES (2)")).rejects.toThrow(/read-only/);
    await expect(sql("gamma", token, "SELECT 1")).rejects.toThrow();
  });

  it("are refused when expired, from another issuer, signed by an unknown key, unscoped or with bad permissions", async () => {
    const id = dbs.alpha!.id;
    const refusals: [Promise<string>, RegExp][] = [
      [sign("k1", { id }, { exp: "-1m" }), /expired/],
      [sign("k1", { id }, { iss: "https://elsewhere.example" }), /issuer or audience/],
      [sign("stranger", { id }), /no key set the organization trusts holds the key/],
      [sign("k1", { a: "rw" }), /names no database .* or group/],
      [sign("k1", { id, perm: [{ t: ["t"], a: ["drop_everything"] }] }), /claim perm.*unknown action/],
      [sign("k1", { id, perm: { t: ["t"] } }), /claim perm.*must be a list/],
      [sign("k1", { id, a: "admin" }), /claim a is "admin"/],
    ];
    for (const [token, message] of refusals) {
      await expect(sql("alpha", await token, "SELECT 1")).rejects.toThrow(message);
    }
  });

  it("open every database of the organization without id or gid only from a key set with an audience", async () => {
    const put = await owner.api.put(jwks("app"), { jwks_url: `${idpUrl}/jwks.json`, audience: "my-app" });
    expect(put.status, put.text).toBe(200);
    const wide = await sign("k1", {}, { aud: "my-app" });
    expect((await sql("gamma", wide, "SELECT 1 AS one")).rows[0]?.one).toBe(1);
    // The same key without the audience is still held to the first set's rule.
    await expect(sql("gamma", await sign("k1", {}), "SELECT 1")).rejects.toThrow(/names no database/);
    expect((await owner.api.delete(jwks("app"))).status).toBe(200);
    await expect(sql("gamma", wide, "SELECT 1")).rejects.toThrow();
  });

  it("never carry Shoal's own claims: a replica's location or databases to ATTACH are ignored", async () => {
    const cfg = `/v1/organizations/${team}/databases/beta/configuration`;
    expect((await owner.api.patch(cfg, { allowed_ips: ["10.9.9.9/32"], allow_attach: true })).status).toBe(
      200,
    );
    try {
      const asReplica = await sign("k1", { id: dbs.beta!.id, rep: "aws-us-east-1" });
      await expect(sql("beta", asReplica, "SELECT 1")).rejects.toThrow(/allowed_ips/);
      const attaching = await sign("k1", { id: dbs.alpha!.id, p: { roa: { ns: [dbs.beta!.id] } } });
      await expect(sql("alpha", attaching, "ATTACH 'beta' AS b")).rejects.toThrow();
    } finally {
      await owner.api.patch(cfg, { allowed_ips: [], allow_attach: false });
    }
  });

  it("are judged by each organization's own trust: another organization's verdict is never reused", async () => {
    // Another organization trusts the same provider, under the same name, for its own app.
    const attacker = await createUser(h);
    const theirs = await createTeam(attacker);
    await createGroup(attacker, theirs, "default", "aws-us-east-1");
    const bait = await createDatabase(attacker, theirs, "bait", "default");
    const baitUrl = (await attacker.api.get(`/v1/organizations/${theirs}/databases/bait`)).body.database
      .http_url;
    const own = (path: string, body: unknown) =>
      attacker.api.put(`/v2/organizations/${theirs}/jwks/${path}`, body);
    expect((await own("app", { jwks_url: `${idpUrl}/jwks.json`, audience: "attacker-app" })).status).toBe(
      200,
    );
    // This organization trusts it too, but only for its own app.
    expect(
      (await owner.api.put(jwks("app"), { jwks_url: `${idpUrl}/jwks.json`, audience: "victim-app" })).status,
    ).toBe(200);
    try {
      // The provider signs for both with one key, each app under its own issuer (as Firebase does).
      const iss = "https://attacker.example";
      const wide = await sign("k1", {}, { aud: "attacker-app", iss });
      const named = await sign("k1", { id: dbs.gamma!.id }, { aud: "attacker-app", iss });
      const open = async (url: string, token: string) => {
        const c = createSqlClient({ url, authToken: token });
        try {
          return await c.execute("SELECT 1 AS one");
        } finally {
          c.close();
        }
      };
      // Verified (and remembered) by the attacker's organization, for its own database...
      expect((await open(baitUrl, wide)).rows[0]?.one).toBe(1);
      await expect(open(baitUrl, named)).rejects.toThrow(/another database/);
      expect(bait.DbId).toBeTruthy();
      // ...and refused here, where the audience is this organization's own.
      await expect(sql("gamma", wide, "SELECT 1")).rejects.toThrow(/issuer or audience/);
      await expect(sql("gamma", named, "SELECT 1")).rejects.toThrow(/issuer or audience/);
    } finally {
      await owner.api.delete(jwks("app"));
    }
  });

  it("follow the provider's key rotation, and stop working once the organization removes the set", async () => {
    const before = await sign("k1", { id: dbs.alpha!.id });
    await sql("alpha", before, "SELECT 1");
    // The provider rotates to a new key: tokens it signs work once Shoal fetches the keys again,
    // which an unknown key id triggers (at most every few seconds).
    served = [keys.k2!.jwk];
    const after = await sign("k2", { id: dbs.alpha!.id });
    await expect
      .poll(async () => (await sql("alpha", after, "SELECT 1 AS one").catch(() => undefined))?.rows[0]?.one, {
        timeout: 15_000,
        interval: 500,
      })
      .toBe(1);
    expect((await owner.api.delete(jwks("idp"))).status).toBe(200);
    await expect(sql("alpha", after, "SELECT 1")).rejects.toThrow(/not a valid database token|neither/);
    const audit = await owner.api.get(`/v1/organizations/${team}/audit-logs`);
    const codes = audit.body.audit_logs.map((e: { code: string }) => e.code);
    expect(codes).toEqual(expect.arrayContaining(["org-jwks-save", "org-jwks-remove"]));
  });
});
