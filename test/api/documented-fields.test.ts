/**
 * Every documented field of the create, configuration and update bodies (Turso's OpenAPI 2026-06
 * and 2024-08, the turso CLI, @tursodatabase/api; the table in docs/guides/encryption.md and the
 * research notes of issue 13) is either honoured, accepted and ignored where ignoring it misleads no
 * one (documented), or refused with a 400 that names it. Each row below sends the field and checks
 * which.
 */
import { createClient as createApiClient } from "@tursodatabase/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newKey } from "../encryption/helpers.js";
import { createGroup, createUser, type TestUser, uniqueName } from "../helpers/factories.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let u: TestUser;
let groupId: string;
const dbs = (p = "") => `/v1/organizations/${u.username}/databases${p}`;

beforeAll(async () => {
  h = await startTestShoal();
  u = await createUser(h);
  await createGroup(u, u.username, "default");
  await createGroup(u, u.username, "other", "aws-eu-west-1");
  groupId = (await u.api.get(`/v1/organizations/${u.username}/groups/other`)).body.group.uuid;
});
afterAll(() => h?.close());

type Verdict = "honoured" | "ignored" | "refused";
const create = (extra: Record<string, unknown>) =>
  u.api.post(dbs(), { name: uniqueName("f"), group: "default", ...extra });

/** Create-body fields besides name/group/seed (covered by their own tests), with what Shoal does. */
const CREATE_FIELDS: Array<{ field: string; value: unknown; verdict: Verdict; check?: (db: any) => void }> = [
  { field: "size_limit", value: "1mb", verdict: "honoured" },
  { field: "location", value: "aws-us-east-1", verdict: "honoured" },
  { field: "is_schema", value: true, verdict: "honoured", check: (d) => expect(d.is_schema).toBe(true) },
  {
    field: "remote_encryption",
    value: { encryption_key: newKey(), encryption_cipher: "aes256cbc" },
    verdict: "honoured",
    check: (d) => expect(d.encryption_cipher).toBe("aes256cbc"),
  },
  {
    field: "remote_encryption",
    value: { encryption_key: newKey(), encryption_cipher: "aes256gcm" },
    verdict: "refused",
  },
  { field: "image", value: "latest", verdict: "ignored" },
  { field: "extensions", value: "all", verdict: "ignored" },
  { field: "use_tursodb", value: false, verdict: "ignored" },
  { field: "use_tursodb", value: true, verdict: "refused" },
];

describe("documented fields of POST .../databases", () => {
  for (const f of CREATE_FIELDS) {
    it(`${f.field} = ${JSON.stringify(f.value)}: ${f.verdict}`, async () => {
      const name = uniqueName("f");
      const r = await u.api.post(dbs(), { name, group: "default", [f.field]: f.value });
      if (f.verdict === "refused") {
        expect(r.status).toBe(400);
        expect(r.body.error).toContain(f.field === "remote_encryption" ? "encryption_cipher" : f.field);
        expect((await u.api.get(dbs(`/${name}`))).status).toBe(404);
        return;
      }
      expect(r.status, r.text).toBe(200);
      const got = (await u.api.get(dbs(`/${name}`))).body.database;
      f.check?.(got);
    });
  }

  it("group_id: honoured (the database lands in that group), refused when it contradicts group", async () => {
    const turso = createApiClient({ org: u.username, token: u.token, baseUrl: h.apiBase });
    const name = uniqueName("byid");
    await turso.databases.create(name, { groupId });
    expect((await u.api.get(dbs(`/${name}`))).body.database.group).toBe("other");
    const clash = await create({ group: "default", group_id: groupId });
    expect(clash.status).toBe(400);
    expect(clash.body.error).toMatch(/group_id names another group/);
  });

  it("size_limit that is not a size is refused with a 400", async () => {
    const r = await create({ size_limit: "not-a-size" });
    expect(r.status).toBe(400);
  });
});

describe("documented fields of PATCH .../configuration", () => {
  let name: string;
  beforeAll(async () => {
    name = uniqueName("cfg");
    expect((await create({ name })).status).toBe(200);
  });
  const patch = (body: Record<string, unknown>) => u.api.patch(dbs(`/${name}/configuration`), body);

  it.each([
    ["size_limit", "2mb", "size_limit", "2mb"],
    ["allow_attach", true, "allow_attach", true],
    ["block_reads", true, "block_reads", true],
    ["block_writes", true, "block_writes", true],
    ["delete_protection", false, "delete_protection", false],
    ["allowed_ips", ["10.0.0.0/8"], "allowed_ips", ["10.0.0.0/8"]],
  ])("%s: honoured", async (field, value, out, expected) => {
    const r = await patch({ [field]: value });
    expect(r.status, r.text).toBe(200);
    expect(r.body[out]).toEqual(expected);
  });

  it("allowed_aws_vpc_ids: [] accepted, a VPC refused with a 400 naming it", async () => {
    expect((await patch({ allowed_aws_vpc_ids: [] })).status).toBe(200);
    const r = await patch({ allowed_aws_vpc_ids: ["vpc-1"] });
    expect(r.status).toBe(400);
    expect(r.body.error).toContain("allowed_aws_vpc_ids");
  });

  it("remote_encryption: refused (no encrypting or rekeying in place)", async () => {
    const r = await patch({ remote_encryption: { encryption_key: newKey() } });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/remote_encryption can only be given when a database is created/);
  });
});

describe("POST .../databases/{db}/update", () => {
  it("takes no body, as documented", async () => {
    const name = uniqueName("upd");
    expect((await create({ name })).status).toBe(200);
    expect((await u.api.post(dbs(`/${name}/update`))).status).toBe(200);
  });
});
