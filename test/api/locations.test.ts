import { createClient } from "@tursodatabase/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGroup, createTeam, createUser, type TestUser, uniqueName } from "../helpers/factories.js";
import { call, client } from "../helpers/http.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let u: TestUser;

beforeAll(async () => {
  h = await startTestShoal();
  u = await createUser(h);
});
afterAll(() => h.close());

describe("GET /v1/locations", () => {
  it("maps codes to descriptions, with or without a token", async () => {
    const anonymous = await call(h.url, "GET", "/v1/locations");
    expect(anonymous.status).toBe(200);
    expect(anonymous.body.locations["aws-us-east-1"]).toBe("AWS US East (Virginia)");
    const turso = createClient({ org: u.username, token: u.token, baseUrl: h.apiBase });
    expect(await turso.locations.list()).toContainEqual({
      code: "aws-eu-west-1",
      description: "AWS EU West (Ireland)",
    });
  });
});

describe("GET /v1/locations/{location}", () => {
  it("describes a location and lists the others, nearest-named first", async () => {
    const r = await call(h.url, "GET", "/v1/locations/aws-us-east-1");
    expect(r.status, r.text).toBe(200);
    expect(r.body.location).toMatchObject({ code: "aws-us-east-1", description: "AWS US East (Virginia)" });
    const codes = r.body.location.closest.map((l: { code: string }) => l.code);
    expect(codes).toEqual([
      "aws-us-east-2",
      "aws-us-west-2",
      "aws-eu-west-1",
      "aws-ap-northeast-1",
      "aws-ap-south-1",
    ]);
    expect(r.body.location.closest[0]).toEqual({ code: "aws-us-east-2", description: "AWS US East (Ohio)" });
  });

  it("answers 404 for a code the catalogue doesn't hold", async () => {
    expect(await call(h.url, "GET", "/v1/locations/ams")).toMatchObject({
      status: 404,
      body: { error: "location ams not found" },
    });
  });

  it("refuses a bad token even though none is needed", async () => {
    expect((await call(h.url, "GET", "/v1/locations/aws-us-east-1", { token: "bad" })).status).toBe(401);
  });
});

describe("GET /v2/organizations/{org}/locations", () => {
  it("groups Turso's aws-* codes under the aws platform, as the turso CLI reads them", async () => {
    const team = await createTeam(u);
    const r = await u.api.get(`/v2/organizations/${team}/locations`);
    expect(r.status, r.text).toBe(200);
    expect(Object.keys(r.body.locations)).toEqual(["aws"]);
    expect(r.body.locations.aws["aws-eu-west-1"]).toBe("AWS EU West (Ireland)");
    expect(Object.keys(r.body.locations.aws)).toHaveLength(6);
  });

  it("answers on the CLI's personal-organization path /v2/locations", async () => {
    const r = await u.api.get("/v2/locations");
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.locations)).toEqual(["aws"]);
  });

  it("refuses non-members and anonymous callers", async () => {
    const team = await createTeam(u);
    const stranger = await createUser(h);
    expect((await stranger.api.get(`/v2/organizations/${team}/locations`)).status).toBe(403);
    expect((await call(h.url, "GET", `/v2/organizations/${team}/locations`)).status).toBe(401);
  });

  it("lets a read-only group-scoped token read", async () => {
    const team = await createTeam(u);
    await createGroup(u, team, "default");
    const minted = await u.api.post(`/v1/auth/api-tokens/${uniqueName("t")}`, {
      organization: team,
      group: "default",
      scopes: ["read-only"],
    });
    expect((await client(h.url, minted.body.token).get(`/v2/organizations/${team}/locations`)).status).toBe(
      200,
    );
  });
});

describe("an operator's own catalogue", () => {
  let own: TestShoal;
  beforeAll(async () => {
    own = await startTestShoal({
      locations: [
        { code: "local", description: "This machine" },
        { code: "aws-eu-west-1", description: "AWS EU West (Ireland)" },
        { code: "rack-2", description: "Second rack" },
        { code: "rack-1", description: "First rack" },
      ],
    });
  });
  afterAll(() => own.close());

  it("lists codes that don't name AWS under the local platform", async () => {
    const admin = client(own.url, own.adminToken);
    const r = await admin.get("/v2/locations");
    expect(r.body.locations).toEqual({
      local: { local: "This machine", "rack-2": "Second rack", "rack-1": "First rack" },
      aws: { "aws-eu-west-1": "AWS EU West (Ireland)" },
    });
  });

  it("puts locations of the same platform first among the closest", async () => {
    const r = await call(own.url, "GET", "/v1/locations/rack-1");
    expect(r.body.location.closest.map((l: { code: string }) => l.code)).toEqual([
      "rack-2",
      "local",
      "aws-eu-west-1",
    ]);
  });
});
