import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { redactSecrets } from "../../src/lib/log-redaction.js";
import { createLogger } from "../../src/lib/logger.js";

const SECRET = "s3cr3t-value-that-must-not-be-logged";

function capture() {
  const lines: Array<Record<string, any>> = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split("\n")) if (l.trim()) lines.push(JSON.parse(l));
      done();
    },
  });
  return { lines, stream };
}

class DriverError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly options: Record<string, unknown>,
  ) {
    super(message);
  }
}

describe("secrets in log lines", () => {
  it("replaces tokens, Authorization and keys at any of the first levels, under any case", () => {
    const line = {
      token: SECRET,
      user: { jwt: SECRET, adminToken: SECRET, name: "ann" },
      req: { headers: { Authorization: `Bearer ${SECRET}`, host: "db" } },
      body: { remote_encryption: { encryption_key: SECRET, encryption_cipher: "aes256gcm" } },
      list: [{ metricsToken: SECRET }, "plain"],
      empty: { token: null },
    };
    const clean = redactSecrets(line);
    expect(JSON.stringify(clean)).not.toContain(SECRET);
    expect(clean.user).toEqual({ jwt: "[redacted]", adminToken: "[redacted]", name: "ann" });
    expect(clean.req.headers).toEqual({ Authorization: "[redacted]", host: "db" });
    expect(clean.body.remote_encryption.encryption_cipher).toBe("aes256gcm");
    expect(clean.list[1]).toBe("plain");
    expect(clean.empty.token).toBeNull();
    // What was logged is left as it was.
    expect(line.user.jwt).toBe(SECRET);
    expect(line.req.headers.Authorization).toBe(`Bearer ${SECRET}`);
  });

  it("returns a line without secrets as it is, copying nothing", () => {
    const line = { requestId: "r1", path: "/v2/pipeline", statements: ["SELECT ?"], nested: { a: [1, 2] } };
    expect(redactSecrets(line)).toBe(line);
  });

  it("keeps an error an error of its class, with its message and stack, its secret fields replaced", () => {
    const e = new DriverError("connect failed", "ECONN", { authToken: "x", token: SECRET });
    const clean = redactSecrets({ err: e }).err;
    expect(clean).toBeInstanceOf(DriverError);
    expect(clean.message).toBe("connect failed");
    expect(clean.stack).toBe(e.stack);
    expect(clean.code).toBe("ECONN");
    expect(clean.options).toEqual({ authToken: "x", token: "[redacted]" });
    expect(e.options.token).toBe(SECRET);
  });

  it("is what the node's logger writes: lines, a child's fields and errors", () => {
    const { lines, stream } = capture();
    const log = createLogger("info", stream).child({ token: SECRET, shard: 1 });
    log.info({ headers: { authorization: SECRET }, status: 200 }, "request");
    log.error({ err: new DriverError("boom", "E1", { jwt: SECRET }) }, "failed");
    log
      .child({ requestId: "r1" })
      .child({ auth: { jwt: SECRET } })
      .warn("deeper");
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatchObject({ requestId: "r1", auth: { jwt: "[redacted]" } });
    expect(JSON.stringify(lines)).not.toContain(SECRET);
    expect(lines[0]).toMatchObject({
      token: "[redacted]",
      shard: 1,
      headers: { authorization: "[redacted]" },
    });
    expect(lines[1]!.err).toMatchObject({ type: "DriverError", message: "boom", code: "E1" });
    expect(lines[1]!.err.options).toEqual({ jwt: "[redacted]" });
    expect(lines[1]!.err.stack).toContain("boom");
  });
});
