import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALL_ROUTES } from "../../src/api/app.js";
import { AUTH_MATRIX, type Fixture } from "../helpers/auth-matrix/index.js";
import {
  addMember,
  createDatabase,
  createGroup,
  createTeam,
  createUser,
  type TestUser,
  uniqueName,
} from "../helpers/factories.js";
import { call } from "../helpers/http.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let owner: TestUser;
let viewer: TestUser;
let stranger: TestUser;
let revoked: string;
let fixture: Fixture;
/** Group-scoped tokens of the owner, on the fixture's group, by the scopes they hold. */
const scoped = new Map<string, string>();
/** An owner token limited to the owner's personal organization, not the fixture's. */
let otherOrgToken: string;
/** The instance administrator's token limited to its personal organization. */
let restrictedAdminToken: string;

const ALL_SCOPES = [
  "read",
  "db:create",
  "db:delete",
  "db:configure",
  "db:mint-token",
  "db:rotate-creds",
  "group:configure",
  "group:mint-token",
  "group:rotate-creds",
];

async function mint(body: unknown): Promise<string> {
  const r = await owner.api.post(`/v1/auth/api-tokens/${uniqueName("scoped")}`, body);
  expect(r.status, r.text).toBe(200);
  return r.body.token;
}

beforeAll(async () => {
  h = await startTestShoal();
  owner = await createUser(h);
  viewer = await createUser(h);
  stranger = await createUser(h);
  const org = await createTeam(owner);
  await addMember(owner, org, viewer.username, "viewer");
  const group = await createGroup(owner, org, "default");
  const database = await createDatabase(owner, org, "matrix-target");
  const orgId = (await owner.api.get(`/v1/organizations/${org}`)).body.organization.id;
  fixture = {
    org,
    group: "default",
    database: "matrix-target",
    orgId,
    groupId: group.uuid,
    databaseId: database.DbId,
  };
  const minted = await owner.api.post("/v1/auth/api-tokens/to-revoke");
  revoked = minted.body.token;
  expect((await owner.api.delete("/v1/auth/api-tokens/to-revoke")).status).toBe(200);
  otherOrgToken = await mint({ organization: owner.username });
  const adminMinted = await call(h.url, "POST", `/v1/auth/api-tokens/${uniqueName("adm")}`, {
    token: h.adminToken,
    body: { organization: "admin" },
  });
  expect(adminMinted.status, adminMinted.text).toBe(200);
  restrictedAdminToken = adminMinted.body.token;
  for (const s of ALL_SCOPES) {
    scoped.set(
      `all-but ${s}`,
      await mint({ organization: org, group: "default", scopes: ALL_SCOPES.filter((x) => x !== s) }),
    );
  }
  scoped.set("full-access", await mint({ organization: org, group: "default", scopes: ["full-access"] }));
  scoped.set("read", await mint({ organization: org, group: "default", scopes: ["read-only"] }));
});
afterAll(() => h.close());

const entries = Object.entries(AUTH_MATRIX);
const send = (key: string, token: string | null, headers: Record<string, string> = {}) => {
  const e = AUTH_MATRIX[key]!;
  const method = key.split(" ")[0]!;
  return call(h.url, method, e.path(fixture), { token, body: e.body, headers });
};

describe("the auth matrix", () => {
  it("covers every route the server registers", () => {
    const registered = ALL_ROUTES.map((r) => `${r.method.toUpperCase()} ${r.path}`).sort();
    expect(Object.keys(AUTH_MATRIX).sort()).toEqual(registered);
  });

  it("declares the token scope of every organization route", () => {
    const missing = entries.filter(([, e]) => e.kind === "org" && e.scope === undefined).map(([k]) => k);
    expect(missing).toEqual([]);
  });

  for (const [key, e] of entries) {
    describe(key, () => {
      if (e.kind === "public") {
        it("answers without a token", async () => {
          expect((await send(key, null)).status).toBe(200);
        });
      } else {
        it("refuses a request with no token (401)", async () => {
          const r = await send(key, null);
          expect(r.status).toBe(401);
          expect(r.body.error).toEqual(expect.any(String));
        });
      }

      it("refuses a malformed token (401)", async () => {
        expect((await send(key, "not-a-token")).status).toBe(401);
      });

      it("refuses a revoked token (401)", async () => {
        expect((await send(key, revoked)).status).toBe(401);
      });

      it("refuses an Authorization header that isn't Bearer (401)", async () => {
        expect((await send(key, null, { authorization: "Token abc" })).status).toBe(401);
      });

      if (e.kind === "admin") {
        it("refuses a user who is not an instance administrator (403)", async () => {
          expect((await send(key, owner.token)).status).toBe(403);
        });

        it("refuses an administrator's token limited to an organization (403)", async () => {
          const r = await send(key, restrictedAdminToken);
          expect(r.status, r.text).toBe(403);
        });
      }

      if (e.kind === "org") {
        it(`refuses a non-member (${e.stranger ?? 403})`, async () => {
          expect((await send(key, stranger.token)).status).toBe(e.stranger ?? 403);
        });

        it(e.viewer === "allow" ? "lets a viewer read" : "refuses a viewer (403)", async () => {
          const r = await send(key, viewer.token);
          if (e.viewer === "allow") expect(r.status, r.text).toBe(e.allowedStatus ?? 200);
          else expect(r.status, r.text).toBe(403);
        });

        it(`refuses a token limited to another organization (${e.stranger ?? 403})`, async () => {
          expect((await send(key, otherOrgToken)).status).toBe(e.stranger ?? 403);
        });

        if (e.scope === "org") {
          it("refuses a group-scoped token, even with every scope (403)", async () => {
            const r = await send(key, scoped.get("full-access")!);
            expect(r.status, r.text).toBe(403);
          });
        } else if (e.scope !== undefined) {
          it(`refuses a group-scoped token without the ${e.scope} scope (403)`, async () => {
            const r = await send(key, scoped.get(`all-but ${e.scope}`)!);
            expect(r.status, r.text).toBe(403);
          });
        }
        if (e.scope === "read") {
          it("lets a read-only group-scoped token read", async () => {
            const r = await send(key, scoped.get("read")!);
            expect(r.status, r.text).toBe(e.allowedStatus ?? 200);
          });
        }

        const alias = ALL_ROUTES.find((r) => `${r.method.toUpperCase()} ${r.path}` === key)?.personalAlias;
        if (alias) {
          it("answers on its personal-organization alias too, with a token only", async () => {
            const method = key.split(" ")[0]!;
            const path = e.path(fixture).replace(`/organizations/${fixture.org}`, "");
            const anonymous = await call(h.url, method, path, { body: e.body });
            expect(anonymous.status).toBe(401);
            const r = await call(h.url, method, path, { token: stranger.token, body: e.body });
            expect(r.body?.error).not.toBe("not found");
          });
        }
      }
    });
  }

  it("left the fixture untouched after every refused call", async () => {
    const g = await owner.api.get(`/v1/organizations/${fixture.org}/groups/default`);
    expect(g.body.group.locations).toEqual(["aws-us-east-1"]);
    const d = await owner.api.get(`/v1/organizations/${fixture.org}/databases`);
    expect(d.body.databases.map((x: { Name: string }) => x.Name)).toEqual(["matrix-target"]);
    const o = await owner.api.get(`/v1/organizations/${fixture.org}`);
    expect(o.body.organization.overages).toBe(false);
    const c = await owner.api.get(`/v1/organizations/${fixture.org}/databases/matrix-target/configuration`);
    expect(c.body.block_writes).toBe(false);
  });
});
