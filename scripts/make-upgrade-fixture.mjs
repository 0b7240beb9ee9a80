#!/usr/bin/env node
/**
 * Writes the data folder of a release as a fixture for the upgrade test
 * (test/service/upgrade.test.ts): a few organizations, databases with rows, a group with a
 * replica location, an encrypted database, API and database tokens.
 *
 *   git worktree add /tmp/rel <release tag or commit>
 *   (cd /tmp/rel && npm ci && npm run build)
 *   node scripts/make-upgrade-fixture.mjs /tmp/rel test/fixtures/upgrade/<version>
 *
 * The release's own build writes the folder (`<checkout>/dist/main.js`), through its public API
 * and data plane only; what the test needs to reach it again (tokens, the key, what each
 * database holds) is written to `<out>/fixture.json`, the folder to `<out>/data-folder`. Those secrets open only this fixture.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "libsql";

const [checkout, out] = process.argv.slice(2);
if (!checkout || !out) {
  console.error("usage: node scripts/make-upgrade-fixture.mjs <release checkout, built> <out folder>");
  process.exit(2);
}
const ADMIN = "upgrade-fixture-admin-token-0123456789";
const version = JSON.parse(readFileSync(path.join(checkout, "package.json"), "utf8")).version;
const scratch = mkdtempSync(path.join(tmpdir(), "shoal-fixture-"));
const data = path.join(scratch, "data");
mkdirSync(data, { mode: 0o700 });
const port = 20000 + Math.floor(Math.random() * 10000);
const url = `http://127.0.0.1:${port}`;
const server = spawn(process.execPath, [path.join(checkout, "dist/main.js")], {
  env: {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    SHOAL_DATA_DIR: data,
    SHOAL_PORT: String(port),
    SHOAL_ADMIN_TOKEN: ADMIN,
    SHOAL_LOG_LEVEL: "warn",
    SHOAL_WORKERS: "2",
  },
  stdio: ["ignore", "inherit", "inherit"],
});

async function call(token, method, p, body) {
  const r = await fetch(`${url}${p}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${text}`);
  return text ? JSON.parse(text) : {};
}

async function sql(db, statements, key) {
  const headers = { authorization: `Bearer ${db.token}`, "content-type": "application/json" };
  if (key) headers["x-turso-encryption-key"] = key;
  const requests = statements.map((s) => ({ type: "execute", stmt: { sql: s } }));
  const r = await fetch(`${url}/db/${db.org}/${db.name}/v2/pipeline`, {
    method: "POST",
    headers,
    body: JSON.stringify({ requests: [...requests, { type: "close" }] }),
  });
  const body = await r.json();
  const failed = body.results?.find((x) => x.type !== "ok");
  if (!r.ok || failed) throw new Error(`SQL on ${db.name}: ${JSON.stringify(failed ?? body)}`);
}

try {
  for (;;) {
    if (
      await fetch(`${url}/health/ready`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const alice = await call(ADMIN, "POST", "/v1/admin/users", {
    username: "alice",
    email: "alice@example.com",
  });
  const bob = await call(ADMIN, "POST", "/v1/admin/users", { username: "bob", email: "bob@example.com" });
  await call(alice.token, "POST", "/v1/organizations", { name: "acme" });
  await call(alice.token, "POST", "/v1/organizations/acme/members", { username: "bob", role: "member" });
  await call(alice.token, "POST", "/v1/organizations/acme/groups", {
    name: "default",
    location: "aws-us-east-1",
  });
  await call(alice.token, "POST", "/v1/organizations/acme/groups", {
    name: "spread",
    location: "aws-us-east-1",
  });
  await call(alice.token, "POST", "/v1/organizations/acme/groups/spread/locations/aws-eu-west-1");
  await call(bob.token, "POST", "/v1/organizations/bob/groups", {
    name: "default",
    location: "aws-us-east-1",
  });
  const key = randomBytes(32).toString("base64");
  const made = [
    { org: "acme", name: "orders", group: "default" },
    { org: "acme", name: "shared", group: "spread" },
    { org: "acme", name: "vault", group: "default", key },
    { org: "bob", name: "notes", group: "default" },
  ];
  const databases = [];
  for (const d of made) {
    const owner = d.org === "bob" ? bob : alice;
    const body = { name: d.name, group: d.group };
    if (d.key) body.remote_encryption = { encryption_key: d.key, encryption_cipher: "aes256cbc" };
    await call(owner.token, "POST", `/v1/organizations/${d.org}/databases`, body);
    const { jwt } = await call(
      owner.token,
      "POST",
      `/v1/organizations/${d.org}/databases/${d.name}/auth/tokens`,
    );
    const db = { ...d, token: jwt, rows: 25 };
    await sql(
      db,
      [
        "CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL, amount REAL)",
        "CREATE INDEX items_label ON items (label)",
        `INSERT INTO items (label, amount) SELECT 'item ' || value, value * 1.5 FROM generate_series(1, ${db.rows})`,
      ],
      d.key,
    );
    databases.push(db);
  }
  const fixture = {
    version,
    adminToken: ADMIN,
    users: { alice: alice.token, bob: bob.token },
    databases,
    written: new Date().toISOString(),
  };
  server.kill("SIGTERM");
  await new Promise((r) => server.once("exit", r));
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  // The store's WAL folded into its file, as a checkpoint would on the next start: a smaller fixture.
  const store = new Database(path.join(data, "control-plane.db"));
  store.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  store.close();
  cpSync(data, path.join(out, "data-folder"), { recursive: true });
  writeFileSync(path.join(out, "fixture.json"), `${JSON.stringify(fixture, null, 2)}\n`);
  console.log(`wrote ${out}: Shoal ${version}, ${databases.length} databases`);
} finally {
  if (server.exitCode === null) server.kill("SIGKILL");
  rmSync(scratch, { recursive: true, force: true });
}
