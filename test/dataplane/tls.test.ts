import { execFile } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { connect as netConnect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { connect as tlsConnect } from "node:tls";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { selfSignedCertificate } from "../helpers/certificate.js";
import { runShoalExpectingFailure, type ShoalProcess, spawnShoal } from "../helpers/process.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const ADMIN = "tls-test-admin-token-0123456789abcdef";
const run = promisify(execFile);

let dir: string;
let certFile: string;
let keyFile: string;
let first: { cert: string; key: string };
let shoal: ShoalProcess;
let port: number;

/** One HTTPS request that trusts `ca`; answers the status and the body text. */
function https(
  method: string,
  pathname: string,
  opts: { ca: string; token?: string; body?: unknown; host?: string },
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method,
        path: pathname,
        ca: opts.ca,
        // A database's hostname, named in the handshake (SNI) and the Host header, as a client that
        // resolved it would; the connection goes to 127.0.0.1 all the same.
        ...(opts.host ? { servername: opts.host } : {}),
        agent: false,
        headers: {
          ...(opts.host ? { host: opts.host } : {}),
          ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
          ...(body ? { "content-type": "application/json" } : {}),
        },
      },
      (res) => {
        let text = "";
        res.on("data", (d: Buffer) => (text += d.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** The certificate the server presents to a new connection. */
function presented(ca: string, servername = "localhost"): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ host: "127.0.0.1", port, servername, ca, rejectUnauthorized: false }, () => {
      resolve(new X509Certificate(s.getPeerCertificate(true).raw).fingerprint256);
      s.end();
    });
    s.on("error", reject);
  });
}

/** The names the tests reach the server by: the host, and a database's own hostname. */
const certificate = () => selfSignedCertificate({ dns: ["localhost", "d-admin.localhost"] });

/** How many data-plane requests the node's main process has sent on to a shard. */
async function mainHops(ca: string): Promise<number> {
  const text = (await https("GET", "/metrics", { ca, token: ADMIN })).text;
  return Number(/shoal_shard_hops_total\{way="main"\} (\d+)/.exec(text)?.[1] ?? 0);
}

const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;

async function until(what: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "shoal-tls-"));
  certFile = path.join(dir, "cert.pem");
  keyFile = path.join(dir, "key.pem");
  first = certificate();
  await writeFile(certFile, first.cert);
  await writeFile(keyFile, first.key);
  shoal = await spawnShoal({
    SHOAL_DATA_DIR: path.join(dir, "data"),
    SHOAL_ADMIN_TOKEN: ADMIN,
    SHOAL_TLS_CERT: certFile,
    SHOAL_TLS_KEY: keyFile,
    SHOAL_HEADERS_TIMEOUT_MS: "2000",
  });
  port = Number(new URL(shoal.url).port);
}, 60_000);

afterAll(async () => {
  shoal?.proc.kill("SIGTERM");
  await shoal?.exited;
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("TLS on the public port", () => {
  it("announces an https URL and serves the API and health checks over HTTPS", async () => {
    expect(shoal.url).toBe(`https://127.0.0.1:${port}`);
    const asAdmin = (method: string, p: string, body?: unknown) =>
      https(method, p, { ca: first.cert, token: ADMIN, body });
    const orgs = await asAdmin("GET", "/v1/organizations");
    expect(orgs.status, orgs.text).toBe(200);
    const group = await asAdmin("POST", "/v1/organizations/admin/groups", {
      name: "default",
      location: "aws-us-east-1",
    });
    expect(group.status, group.text).toBeLessThan(300);
    const replica = await asAdmin("POST", "/v1/organizations/admin/groups/default/locations/aws-eu-west-1");
    expect(replica.status, replica.text).toBe(200);
    const db = await asAdmin("POST", "/v1/organizations/admin/databases", { name: "d", group: "default" });
    expect(db.status, db.text).toBe(200);
    // The URLs handed back are the ones the caller can use: over TLS.
    const shown = await https("GET", "/v1/organizations/admin/databases/d", { ca: first.cert, token: ADMIN });
    expect(JSON.parse(shown.text).database.http_url).toBe(`https://127.0.0.1:${port}/db/admin/d/`);
    expect((await https("GET", "/health", { ca: first.cert })).status).toBe(200);
  });

  it("serves @libsql/client over libsql://, https:// and wss:// URLs", async () => {
    const minted = await https("POST", "/v1/organizations/admin/databases/d/auth/tokens", {
      ca: first.cert,
      token: ADMIN,
    });
    const token = JSON.parse(minted.text).jwt as string;
    const create = await https("POST", "/db/admin/d/v2/pipeline", {
      ca: first.cert,
      token,
      body: { requests: [{ type: "execute", stmt: { sql: "CREATE TABLE seen (scheme TEXT)" } }] },
    });
    expect(create.status, create.text).toBe(200);
    const script = path.join(ROOT, "test/helpers/tls-clients.mjs");
    const { stdout } = await run(process.execPath, [script, `127.0.0.1:${port}`, token], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", NODE_EXTRA_CA_CERTS: certFile },
    });
    // Two rows per scheme: a statement, and an interactive transaction (a stream held open).
    expect(JSON.parse(stdout)).toEqual({ libsql: 2, https: 4, wss: 6 });
    // The replica location syncs inside the node, not through the TLS port.
    const wait = await https(
      "GET",
      "/v1/organizations/admin/groups/default/locations/aws-eu-west-1/wait?timeout=10",
      {
        ca: first.cert,
        token: ADMIN,
      },
    );
    expect(wait.status, wait.text).toBe(200);
    const count = { requests: [{ type: "execute", stmt: { sql: "SELECT count(*) FROM seen" } }] };
    const atReplica = await https("POST", "/db/admin/d@aws-eu-west-1/v2/pipeline", {
      ca: first.cert,
      token,
      body: count,
    });
    expect(atReplica.status, atReplica.text).toBe(200);
    expect(JSON.parse(atReplica.text).results[0].response.result.rows).toEqual([
      [{ type: "integer", value: "6" }],
    ]);
    // The client's own address reaches the shard behind TLS: an allow-list without it refuses.
    const cfg = "/v1/organizations/admin/databases/d/configuration";
    const select = { requests: [{ type: "execute", stmt: { sql: "SELECT 1" } }] };
    for (const [allowed, status] of [
      [["192.0.2.1/32"], 403],
      [["127.0.0.1/32"], 200],
    ] as const) {
      const set = await https("PATCH", cfg, { ca: first.cert, token: ADMIN, body: { allowed_ips: allowed } });
      expect(set.status, set.text).toBe(200);
      const r = await https("POST", "/db/admin/d/v2/pipeline", { ca: first.cert, token, body: select });
      expect(r.status, r.text).toBe(status);
    }
  }, 30_000);

  it("hands a handshake naming a database's hostname to its shard; one naming the host is served by the main process", async () => {
    const minted = await https("POST", "/v1/organizations/admin/databases/d/auth/tokens", {
      ca: first.cert,
      token: ADMIN,
    });
    const token = JSON.parse(minted.text).jwt as string;
    const body = {
      requests: [{ type: "execute", stmt: { sql: "SELECT count(*) FROM seen" } }, { type: "close" }],
    };
    const before = await mainHops(first.cert);
    const direct = await https("POST", "/v2/pipeline", {
      ca: first.cert,
      token,
      body,
      host: "d-admin.localhost",
    });
    expect(direct.status, direct.text).toBe(200);
    expect(await mainHops(first.cert)).toBe(before);
    const byPath = await https("POST", "/db/admin/d/v2/pipeline", {
      ca: first.cert,
      token,
      body,
      host: "localhost",
    });
    expect(byPath.status, byPath.text).toBe(200);
    expect(await mainHops(first.cert)).toBe(before + 1);
  });

  it("answers plain HTTP on the TLS port at once with a 400 that says to use https, and logs it", async () => {
    const res = await fetch(`http://127.0.0.1:${port}/v1/organizations`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toContain(
      "this port speaks only HTTPS (TLS): use an https:// or wss:// URL",
    );
    await until(async () => shoal.stdout().includes("plain HTTP arrived on the TLS port"));
  });

  it("takes a renewed certificate when the files change, and on SIGHUP; keeps the old one when the new pair is broken", async () => {
    expect(await presented(first.cert)).toBe(fingerprint(first.cert));
    expect(await presented(first.cert, "d-admin.localhost")).toBe(fingerprint(first.cert));
    const second = certificate();
    await writeFile(keyFile, second.key);
    await writeFile(certFile, second.cert);
    await until(async () => (await presented(second.cert)) === fingerprint(second.cert));
    const third = certificate();
    // A half-done renewal (the new certificate, the old key) is refused; the pair in use stays.
    await writeFile(certFile, third.cert);
    shoal.proc.kill("SIGHUP");
    await until(async () => /"reason":"SIGHUP"[^\n]*TLS certificate not reloaded/.test(shoal.stdout()));
    expect(await presented(second.cert)).toBe(fingerprint(second.cert));
    await writeFile(keyFile, third.key);
    shoal.proc.kill("SIGHUP");
    await until(async () => (await presented(third.cert)) === fingerprint(third.cert));
    expect(shoal.stdout()).toContain("TLS certificate reloaded (SIGHUP)");
    // The shard answering the database's own hostname took the new pair too.
    await until(async () => (await presented(third.cert, "d-admin.localhost")) === fingerprint(third.cert));
    expect(shoal.proc.exitCode).toBeNull();
    const still = await https("GET", "/v1/organizations", { ca: third.cert, token: ADMIN });
    expect(still.status).toBe(200);
  }, 60_000);

  it("ends a connection that sends nothing but a stalled handshake's first bytes", async () => {
    const socket = netConnect(port, "127.0.0.1");
    socket.write(Buffer.from([0x16, 0x03, 0x01]));
    socket.on("error", () => {});
    const closed = await new Promise<boolean>((resolve) => {
      socket.on("close", () => resolve(true));
      setTimeout(() => resolve(false), 20_000);
    });
    expect(closed).toBe(true);
  }, 30_000);
});

describe("TLS settings and a plain port", () => {
  it("refuses to start with a certificate and no key, or a key that isn't the certificate's", async () => {
    const data = path.join(dir, "refused");
    const alone = await runShoalExpectingFailure({ SHOAL_DATA_DIR: data, SHOAL_TLS_CERT: certFile });
    expect(alone.code).toBe(2);
    expect(alone.output).toContain("SHOAL_TLS_CERT and SHOAL_TLS_KEY: set both");
    const other = selfSignedCertificate();
    const otherKey = path.join(dir, "other-key.pem");
    await writeFile(otherKey, other.key);
    const mismatch = await runShoalExpectingFailure({
      SHOAL_DATA_DIR: data,
      SHOAL_TLS_CERT: certFile,
      SHOAL_TLS_KEY: otherKey,
    });
    expect(mismatch.code).toBe(2);
    expect(mismatch.output).toContain(`${otherKey} is not the key of the certificate in ${certFile}`);
  });

  it("refuses a TLS handshake on a plain port at once, with a log line", async () => {
    const plain = await spawnShoal({ SHOAL_DATA_DIR: path.join(dir, "plain"), SHOAL_ADMIN_TOKEN: ADMIN });
    try {
      const { port: plainPort } = new URL(plain.url);
      const error = await new Promise<Error>((resolve) => {
        const s = tlsConnect({ host: "127.0.0.1", port: Number(plainPort), rejectUnauthorized: false }, () =>
          resolve(new Error("handshake succeeded")),
        );
        s.on("error", resolve);
      });
      expect(error.message).toMatch(/handshake failure/i);
      await until(async () => plain.stdout().includes("a TLS handshake arrived on this plain-HTTP port"));
    } finally {
      plain.proc.kill("SIGTERM");
      await plain.exited;
    }
  }, 60_000);
});
