import http from "node:http";
import net from "node:net";

/**
 * Sockets that send a request's headers a line every second and never finish them (slowloris).
 * `close` ends them; `closedByServer` counts those the server has cut off meanwhile.
 */
export async function slowloris(url: string, count: number) {
  const { hostname, port } = new URL(url);
  const sockets: net.Socket[] = [];
  let closedByServer = 0;
  let stopping = false;
  for (let i = 0; i < count; i++) {
    const s = net.connect(Number(port), hostname);
    s.on("error", () => {});
    s.on("close", () => {
      if (!stopping) closedByServer++;
    });
    s.write(`GET /health HTTP/1.1\r\nHost: ${hostname}\r\n`);
    sockets.push(s);
  }
  await Promise.all(sockets.map((s) => new Promise((r) => (s.connecting ? s.once("connect", r) : r(null)))));
  const timer = setInterval(() => {
    for (const s of sockets) if (!s.destroyed) s.write(`X-Slow-${Math.floor(Math.random() * 1e6)}: 1\r\n`);
  }, 1000);
  return {
    get closedByServer() {
      return closedByServer;
    },
    close() {
      stopping = true;
      clearInterval(timer);
      for (const s of sockets) s.destroy();
    },
  };
}

/**
 * Clients that ask for a large answer over HTTP and then don't read it: each response is paused
 * after its first bytes, so the server's writes back up. Resolves once every answer has begun;
 * `close` ends them.
 */
export async function slowReaders(pipelineUrl: string, token: string, count: number, sql: string) {
  const body = JSON.stringify({ requests: [{ type: "execute", stmt: { sql } }, { type: "close" }] });
  const requests: http.ClientRequest[] = [];
  const started = Array.from({ length: count }, () => {
    return new Promise<void>((resolve, reject) => {
      const req = http.request(
        pipelineUrl,
        {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          agent: false,
        },
        (res) => {
          if (res.statusCode !== 200) reject(new Error(`slow reader got ${res.statusCode}`));
          res.once("data", () => {
            res.pause();
            resolve();
          });
        },
      );
      req.on("error", () => {});
      req.end(body);
      requests.push(req);
    });
  });
  await Promise.all(started);
  return {
    close() {
      for (const r of requests) r.destroy();
    },
  };
}
