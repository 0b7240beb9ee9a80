/**
 * A failover of a group holding several databases: every database's replica becomes a primary
 * with all its rows, and stays one while that node's replica poller goes on running (the poller
 * rebuilds replicas whose primary moved, and must leave the ones being promoted alone).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { client } from "../helpers/http.js";
import {
  type Cluster,
  EAST,
  printNodeWarningsOnFailure,
  rows,
  run,
  SETTLE_MS,
  startCluster,
  WEST,
  within,
} from "../helpers/nodes.js";
import type { ShoalProcess } from "../helpers/process.js";
import { ADMIN_TOKEN } from "../helpers/shoal.js";

printNodeWarningsOnFailure();

const LEASE = { SHOAL_PRIMARY_LEASE_MS: "2000" };
const org = "many";
const names = ["d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7"];
let cluster: Cluster;
let a: ShoalProcess;
let b: ShoalProcess;
let token: string;

beforeAll(async () => {
  cluster = await startCluster();
  [a, b] = await Promise.all([cluster.start("node-a", EAST, LEASE), cluster.start("node-b", WEST, LEASE)]);
  const user = await client(a.url, ADMIN_TOKEN).post("/v1/admin/users", { username: org, email: "m@x.io" });
  const api = client(a.url, user.body.token);
  expect((await api.post(`/v1/organizations/${org}/groups`, { name: "g", location: EAST })).status).toBe(200);
  for (const name of names) await api.post(`/v1/organizations/${org}/databases`, { name, group: "g" });
  expect((await api.post(`/v1/organizations/${org}/groups/g/locations/${WEST}`)).status).toBe(200);
  token = (await api.post(`/v1/organizations/${org}/groups/g/auth/tokens`)).body.jwt;
  for (const name of names) {
    await run(`${a.url}/db/${org}/${name}/`, token, "CREATE TABLE t (v TEXT)");
    await run(`${a.url}/db/${org}/${name}/`, token, `INSERT INTO t VALUES ('${name}')`);
  }
  for (const name of names)
    await within(SETTLE_MS, async () => {
      expect(await rows(`${b.url}/db/${org}/${name}@${WEST}/`, token, "SELECT v FROM t")).toEqual([[name]]);
    });
}, 120_000);

afterAll(async () => {
  await cluster?.close();
});

it("promotes every database of the group with its rows, and keeps them primaries", async () => {
  a.proc.kill("SIGKILL");
  await a.exited;
  const moved = await client(b.url, ADMIN_TOKEN).post(`/v1/admin/groups/${org}/g/failover`, {
    location: WEST,
  });
  expect(moved.status, moved.text).toBe(200);
  expect(moved.body.databases).toBe(names.length);
  // Let the replica poller run a few rounds after the promotion.
  await new Promise((r) => setTimeout(r, 3000));
  for (const name of names) {
    expect(await rows(`${b.url}/db/${org}/${name}/`, token, "SELECT v FROM t"), name).toEqual([[name]]);
    await run(`${b.url}/db/${org}/${name}/`, token, "INSERT INTO t VALUES ('after')");
  }
  expect(b.output()).not.toMatch(/no replica here to promote|could not rebuild a replica/);
}, 60_000);
