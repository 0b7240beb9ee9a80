import http, { type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  BodyTimeoutError,
  BodyTooLargeError,
  MAX_BODY_BYTES,
  readBodyBytes,
} from "../../src/dataplane/http-io.js";

/** A real server whose handler reads each request's body with `readBodyBytes` and says what came of it. */
async function reader(timeoutMs: number): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req: IncomingMessage, res) => {
    readBodyBytes(req, timeoutMs).then(
      (body) => res.end(JSON.stringify({ bytes: body.length, text: body.subarray(0, 40).toString() })),
      (e: unknown) =>
        res.end(
          JSON.stringify({
            error:
              e instanceof BodyTimeoutError
                ? "timeout"
                : e instanceof BodyTooLargeError
                  ? "large"
                  : String(e),
          }),
        ),
    );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

/** Sends raw bytes in pieces, `gapMs` apart, and returns the answer's body. */
async function rawRequest(
  port: number,
  pieces: Array<string | Buffer>,
  gapMs = 0,
): Promise<Record<string, unknown>> {
  const socket = net.connect(port, "127.0.0.1");
  await new Promise<void>((r) => socket.once("connect", () => r()));
  let answer = "";
  socket.on("data", (d: Buffer) => (answer += d.toString()));
  const ended = new Promise<void>((r) => socket.once("close", () => r()));
  for (const p of pieces) {
    socket.write(p);
    if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
  }
  // The answer is one small JSON body after the head; wait until it is whole.
  for (let i = 0; i < 200 && !/\r\n\r\n\{.*\}$/s.test(answer); i++)
    await new Promise((r) => setTimeout(r, 10));
  socket.destroy();
  await ended;
  return JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4));
}

const head = (length: number) => `POST / HTTP/1.1\r\nhost: x\r\ncontent-length: ${length}\r\n\r\n`;

describe("reading a request body", () => {
  let server: Awaited<ReturnType<typeof reader>> | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it("takes a body that came whole with its head", async () => {
    server = await reader(5_000);
    const body = '{"requests":[]}';
    expect(await rawRequest(server.port, [head(body.length) + body])).toEqual({
      bytes: body.length,
      text: body,
    });
  });

  it("takes an empty body", async () => {
    server = await reader(5_000);
    expect(await rawRequest(server.port, [head(0)])).toEqual({ bytes: 0, text: "" });
  });

  it("waits for a body that comes in pieces after its head", async () => {
    server = await reader(5_000);
    const body = "0123456789".repeat(3);
    const got = await rawRequest(
      server.port,
      [head(body.length), body.slice(0, 10), body.slice(10, 20), body.slice(20)],
      30,
    );
    expect(got).toEqual({ bytes: 30, text: body });
  });

  it("gives up on a body that stops coming, after the timeout", async () => {
    server = await reader(150);
    const started = Date.now();
    expect(await rawRequest(server.port, [`${head(100)}only part`])).toEqual({ error: "timeout" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it("refuses a body past the limit", async () => {
    server = await reader(30_000);
    const big = Buffer.alloc(MAX_BODY_BYTES + 1, 0x20);
    expect(await rawRequest(server.port, [head(big.length), big])).toEqual({ error: "large" });
  });
});
