import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, type TestUser } from "../helpers/factories.js";
import { call } from "../helpers/http.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let u: TestUser;
const cliHeaders = { "user-agent": "turso-cli/v1.0.0 (linux/amd64)", tursoCliVersion: "v1.0.0" };

beforeAll(async () => {
  h = await startTestShoal();
  u = await createUser(h);
});
afterAll(() => h.close());

const org = () => `/v1/organizations/${u.username}`;

describe("request bodies as real clients send them", () => {
  it("creates a group from the CLI's capitalised keys with a JSON content type and a trailing newline", async () => {
    const r = await call(h.url, "POST", `${org()}/groups`, {
      token: u.token,
      body: '{"Name":"default","Location":"aws-us-east-1","Version":"latest"}\n',
      contentType: "application/json",
      headers: cliHeaders,
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.group).toMatchObject({ name: "default", primary: "aws-us-east-1" });
  });

  it("creates a database from a JSON body sent with no content type at all", async () => {
    const r = await call(h.url, "POST", `${org()}/databases`, {
      token: u.token,
      body: '{"name":"plain","group":"default"}',
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.database.Name).toBe("plain");
  });

  it("creates a database from a text/plain body (what fetch labels a string body)", async () => {
    const r = await call(h.url, "POST", `${org()}/databases`, {
      token: u.token,
      body: JSON.stringify({ name: "texty", group: "default" }),
      contentType: "text/plain;charset=UTF-8",
    });
    expect(r.status, r.text).toBe(200);
  });

  it("matches body keys without regard to case", async () => {
    const r = await call(h.url, "POST", `${org()}/databases`, {
      token: u.token,
      body: { NAME: "shouty", Group: "default" },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.database.Name).toBe("shouty");
  });

  it("accepts the CLI's empty location and explicit nulls for optional fields", async () => {
    const r = await call(h.url, "POST", `${org()}/databases`, {
      token: u.token,
      body: { name: "from-cli", group: "default", location: "", seed: null, size_limit: null, schema: null },
      headers: cliHeaders,
    });
    expect(r.status, r.text).toBe(200);
  });

  it("defaults a missing group to `default`, as Turso's older clients expect", async () => {
    const r = await call(h.url, "POST", `${org()}/databases`, { token: u.token, body: { name: "no-group" } });
    expect(r.status, r.text).toBe(200);
    const got = await call(h.url, "GET", `${org()}/databases/no-group`, { token: u.token });
    expect(got.body.database.group).toBe("default");
  });

  it("adds a location with an empty body and a JSON content type (the CLI)", async () => {
    const r = await call(h.url, "POST", `${org()}/groups/default/locations/aws-eu-west-1`, {
      token: u.token,
      body: "",
      contentType: "application/json",
      headers: cliHeaders,
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.group.locations).toContain("aws-eu-west-1");
  });

  it("adds a location with no body and no content type (the TS client)", async () => {
    const r = await call(h.url, "POST", `${org()}/groups/default/locations/aws-us-west-2`, {
      token: u.token,
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.group.locations).toEqual(["aws-us-east-1", "aws-eu-west-1", "aws-us-west-2"]);
  });

  it("adds a location even when a stray body is sent", async () => {
    const r = await call(h.url, "POST", `${org()}/groups/default/locations/aws-ap-south-1`, {
      token: u.token,
      body: "{}",
    });
    expect(r.status, r.text).toBe(200);
  });

  it("updates an organization from a body with no content type (the TS client)", async () => {
    const r = await call(h.url, "PATCH", org(), { token: u.token, body: '{"overages":true}' });
    expect(r.status, r.text).toBe(200);
    expect(r.body.organization.overages).toBe(true);
  });

  it("treats an empty PATCH body as no change", async () => {
    const r = await call(h.url, "PATCH", org(), { token: u.token, body: "" });
    expect(r.status, r.text).toBe(200);
    expect(r.body.organization.overages).toBe(true);
  });

  it("reads `Overages` in any case", async () => {
    const r = await call(h.url, "PATCH", org(), { token: u.token, body: { Overages: false } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.organization.overages).toBe(false);
  });

  it("accepts the Bearer scheme in any case", async () => {
    const r = await call(h.url, "GET", "/v1/organizations", {
      headers: { authorization: `bearer ${u.token}` },
    });
    expect(r.status).toBe(200);
  });
});
