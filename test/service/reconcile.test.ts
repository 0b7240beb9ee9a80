import { existsSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reconcileInstanceFiles } from "../../src/domain/reconcile.js";
import { createDatabase, createGroup, createUser, type TestUser } from "../helpers/factories.js";
import { instanceFile, isValidDatabase } from "../helpers/files.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let u: TestUser;

beforeAll(async () => {
  h = await startTestShoal();
  u = await createUser(h);
  await createGroup(u, u.username, "default", "aws-us-east-1");
  await u.api.post(`/v1/organizations/${u.username}/groups/default/locations/aws-eu-west-1`);
});
afterAll(() => h.close());

describe("reconciling files with the store on start", () => {
  it("recreates a missing replica, removes old orphans, keeps young files and reports a lost primary", async () => {
    const a = await createDatabase(u, u.username, "a");
    const b = await createDatabase(u, u.username, "b");
    const replica = instanceFile(h.dataDir, "aws-eu-west-1", a.DbId);
    unlinkSync(replica);
    const lostPrimary = instanceFile(h.dataDir, "aws-us-east-1", b.DbId);
    unlinkSync(lostPrimary);
    const oldOrphan = instanceFile(h.dataDir, "aws-us-east-1", "00000000-0000-4000-8000-000000000001");
    writeFileSync(oldOrphan, "");
    const anHourAgo = (Date.now() - 3_600_000) / 1000;
    utimesSync(oldOrphan, anHourAgo, anHourAgo);
    const youngOrphan = instanceFile(h.dataDir, "aws-us-east-1", "00000000-0000-4000-8000-000000000002");
    writeFileSync(youngOrphan, "");

    await h.restart();

    expect(isValidDatabase(replica)).toBe(true);
    expect(existsSync(oldOrphan)).toBe(false);
    expect(existsSync(youngOrphan)).toBe(true);
    expect(existsSync(lostPrimary)).toBe(false);
    const report = await reconcileInstanceFiles(h.shoal.deps);
    expect(report).toEqual({ recreated: 0, missingPrimaries: 1, removedOrphans: 0 });
  });
});
