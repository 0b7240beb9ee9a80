/**
 * Request bodies past the documented limits (1 MiB on the management API, 16 MiB on the data
 * plane) are refused with 413 while they are read, whether their length is declared or they come
 * chunked, and memory doesn't grow with what is sent.
 */
import { execFile } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pipeline, setupDatabase, sql, type TestDatabase } from "../helpers/dataplane.js";
import { createGroup, createUser, type TestUser } from "../helpers/factories.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;
let user: TestUser;
let db: TestDatabase;

beforeAll(async () => {
  h = await startTestShoal();
  user = await createUser(h);
  await createGroup(user, user.username);
  db = await setupDatabase(h, { user });
});
afterAll(() => h.close());

const MiB = 1024 * 1024;

/**
 * Posts `head` and then `total` bytes of spaces, chunked (no Content-Length), from a child process,
 * so that only the server's memory is in this process; answers the status and body it got.
 */
function sendChunked(url: string, token: string, total: number, head: string) {
  const script = `
    const [url, token, total, head] = process.argv.slice(1);
    let sent = -1;
    const chunk = new Uint8Array(${MiB}).fill(32);
    const body = new ReadableStream({
      pull(c) {
        if (sent < 0) { c.enqueue(new TextEncoder().encode(head)); sent = 0; return; }
        if (sent >= Number(total)) return c.close();
        c.enqueue(chunk.slice(0, Math.min(${MiB}, Number(total) - sent)));
        sent += ${MiB};
      },
    });
    fetch(url, { method: "POST", headers: { authorization: "Bearer " + token }, body, duplex: "half" })
      .then(async (r) => console.log(JSON.stringify({ status: r.status, text: await r.text() })))
      .catch((e) => console.log(JSON.stringify({ status: 0, text: String(e.cause?.code ?? e) })));
  `;
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    execFile(process.execPath, ["-e", script, url, token, String(total), head], (err, stdout) =>
      err ? reject(err) : resolve(JSON.parse(stdout)),
    );
  });
}

/** Runs `send` while sampling this process's memory (Shoal runs in it); returns its answer and the growth. */
async function measured<T>(send: () => Promise<T>): Promise<{ answer: T; grewBy: number }> {
  const base = process.memoryUsage().rss;
  let peak = base;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 2);
  try {
    const answer = await send();
    return { answer, grewBy: Math.max(peak, process.memoryUsage().rss) - base };
  } finally {
    clearInterval(sampler);
  }
}

const dbs = () => `${h.url}/v1/organizations/${user.username}/databases`;

describe("the management API", () => {
  it("refuses a body declared larger than 1 MiB before even checking the token", async () => {
    const body = JSON.stringify({ name: "huge", group: "default", pad: "x".repeat(2 * MiB) });
    for (const authorization of [`Bearer ${user.token}`, "Bearer not-a-token", undefined]) {
      const headers: Record<string, string> = authorization ? { authorization } : {};
      const r = await fetch(dbs(), { method: "POST", headers, body });
      expect(r.status).toBe(413);
      expect(await r.json()).toEqual({
        error: "the request body is larger than 1048576 bytes, the most the management API reads",
        code: "request_too_large",
      });
    }
    expect((await user.api.get(`/v1/organizations/${user.username}/databases/huge`)).status).toBe(404);
  });

  it("refuses a chunked body without a length as soon as it passes 1 MiB, growing memory by little", async () => {
    const { answer, grewBy } = await measured(() =>
      sendChunked(dbs(), user.token, 120 * MiB, '{"name": "chunky", "group": "default"}'),
    );
    expect(answer.status, answer.text).toBe(413);
    expect(JSON.parse(answer.text).error).toMatch(/larger than 1048576 bytes/);
    // Before: the whole body was read into memory (and once more as a string). What remains is
    // garbage the collector hasn't taken yet.
    expect(grewBy).toBeLessThan(40 * MiB);
    expect((await user.api.get(`/v1/organizations/${user.username}/databases/chunky`)).status).toBe(404);
  });

  it("reads a body under the limit, padding and all", async () => {
    const body = `{"name": "padded", "group": "default"}${" ".repeat(MiB - 100)}`;
    const r = await fetch(dbs(), {
      method: "POST",
      headers: { authorization: `Bearer ${user.token}` },
      body,
    });
    expect(r.status, await r.clone().text()).toBe(200);
  });
});

describe("the data plane", () => {
  const url = () => `${db.urls.httpPath}v2/pipeline`;
  const headers = () => ({ authorization: `Bearer ${db.token}` });

  it("answers a body declared larger than 16 MiB with 413 in its error shape, not a reset", async () => {
    const body = JSON.stringify({ requests: [sql(`SELECT '${"x".repeat(17 * MiB)}'`)] });
    const r = await fetch(url(), { method: "POST", headers: headers(), body });
    expect(r.status).toBe(413);
    expect(r.headers.get("content-type")).toBe("application/json");
    const message = "the request body is larger than 16777216 bytes, the most the data plane reads";
    expect(await r.json()).toEqual({ error: message, message, code: "REQUEST_TOO_LARGE" });
  });

  it("answers a chunked body past 16 MiB with 413 too, growing memory by little", async () => {
    const { answer, grewBy } = await measured(() =>
      sendChunked(url(), db.token, 120 * MiB, '{"requests": []}'),
    );
    expect(answer.status, answer.text).toBe(413);
    expect(JSON.parse(answer.text).code).toBe("REQUEST_TOO_LARGE");
    expect(grewBy).toBeLessThan(40 * MiB);
    // The server goes on serving.
    const ok = await pipeline(db.urls.httpPath, db.token, { requests: [sql("SELECT 1")] });
    expect(ok.body.results[0].type).toBe("ok");
  });

  it("takes a body just under 16 MiB", async () => {
    const r = await pipeline(db.urls.httpPath, db.token, {
      requests: [sql("SELECT length(?)", [{ type: "text", value: "y".repeat(15 * MiB) }])],
    });
    expect(r.status).toBe(200);
    expect(r.body.results[0].response.result.rows[0][0]).toEqual({
      type: "integer",
      value: String(15 * MiB),
    });
  });
});
