import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { proxyHttp } from "../../src/dataplane/forward/http-proxy.js";

/**
 * A holder written at the socket level, so the test decides exactly what happens to the second
 * request on a kept-alive connection: the holder went away before reading it (a reset), or read
 * it and then went away without answering (a clean close).
 */
type Fate = "answer" | "reset" | "close";

class RawHolder {
  /** Requests the holder read whole (and so might have acted on). */
  taken: string[] = [];
  /** What happens to the nth request on each connection (1-based); answered when unlisted. */
  fates = new Map<number, Fate>();
  private readonly server = net.createServer((socket) => this.serve(socket));

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private serve(socket: net.Socket): void {
    let seen = 0;
    let pending = Buffer.alloc(0);
    socket.on("error", () => {});
    socket.on("data", (chunk) => {
      const fate = this.fates.get(seen + 1) ?? "answer";
      if (fate === "reset") {
        // Gone before reading a byte of it: the kernel answers the request with a reset.
        socket.resetAndDestroy();
        return;
      }
      pending = Buffer.concat([pending, chunk]);
      const head = pending.indexOf("\r\n\r\n");
      if (head < 0) return;
      const length = Number(/content-length: *(\d+)/i.exec(pending.subarray(0, head).toString())?.[1] ?? 0);
      if (pending.length < head + 4 + length) return;
      const body = pending.subarray(head + 4, head + 4 + length).toString();
      pending = pending.subarray(head + 4 + length);
      seen += 1;
      this.taken.push(body);
      if (fate === "close") socket.end();
      else
        socket.write(
          `HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\nkeep-alive: timeout=30\r\n\r\n${body}`,
        );
    });
  }
}

const servers: { close: () => Promise<void> }[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function frontFor(holderUrl: string): Promise<string> {
  const front = http.createServer((req, res) =>
    proxyHttp(
      req,
      res,
      { holder: { id: "node-a", url: holderUrl }, database: "db1" },
      {
        self: "node-b",
        proof: "proof",
        peer: "127.0.0.1",
        requestId: "r1",
      },
    ),
  );
  await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
  servers.push({ close: () => new Promise((resolve) => front.close(() => resolve())) });
  return `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
}

async function post(url: string, body: string): Promise<{ status: number; text: string }> {
  const r = await fetch(url, { method: "POST", body, headers: { "content-type": "text/plain" } });
  return { status: r.status, text: await r.text() };
}

describe("forwarding over a pooled connection the holder has closed", () => {
  it("sends the request once more on a fresh connection, and the holder runs it once", async () => {
    const holder = new RawHolder();
    const front = await frontFor(await holder.listen());
    servers.push({ close: () => holder.stop() });
    expect(await post(front, "first")).toEqual({ status: 200, text: "first" });
    holder.fates.set(2, "reset");
    expect(await post(front, "second")).toEqual({ status: 200, text: "second" });
    expect(holder.taken).toEqual(["first", "second"]);
  });

  it("answers 503, nothing sent, when the holder is gone for good", async () => {
    const holder = new RawHolder();
    const front = await frontFor(await holder.listen());
    expect(await post(front, "first")).toEqual({ status: 200, text: "first" });
    holder.fates.set(2, "reset");
    void holder.stop(); // no new connections; the pooled one is reset on use
    const r = await post(front, "second");
    expect(r.status).toBe(503);
    const body = JSON.parse(r.text) as { code: string; error: string };
    expect(body.code).toBe("DATABASE_NODE_UNREACHABLE");
    expect(body.error).toContain("nothing was sent to it");
    expect(holder.taken).toEqual(["first"]);
  });

  it("never sends twice what the holder read before going away: 502, may have run", async () => {
    const holder = new RawHolder();
    const front = await frontFor(await holder.listen());
    servers.push({ close: () => holder.stop() });
    expect(await post(front, "first")).toEqual({ status: 200, text: "first" });
    holder.fates.set(2, "close");
    const r = await post(front, "second");
    expect(r.status).toBe(502);
    expect((JSON.parse(r.text) as { code: string }).code).toBe("DATABASE_NODE_FAILED");
    expect(holder.taken).toEqual(["first", "second"]);
  });
});
