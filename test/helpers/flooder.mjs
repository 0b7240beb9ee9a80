// Tenant A's flood of point reads, in a worker thread of the test process: `connections` kept-alive
// connections, each sending its next request as soon as the last is answered. Raw HTTP (no client
// library) so the flood costs this thread little and the server as much as it can take.
import http from "node:http";
import { parentPort, workerData } from "node:worker_threads";

const { url, token, connections } = workerData;
const port = /** @type {import("node:worker_threads").MessagePort} */ (parentPort);
const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
const target = `${url.replace(/^libsql:/, "http:")}/v2/pipeline`;
let stop = false;
let answered = 0;
let failed = 0;
port.on("message", (m) => {
  if (m === "stop") stop = true;
});

/** @param {number} id */
function post(id) {
  const body = JSON.stringify({
    requests: [
      {
        type: "execute",
        stmt: { sql: "SELECT v FROM kv WHERE id = ?", args: [{ type: "integer", value: String(id) }] },
      },
      { type: "close" },
    ],
  });
  return new Promise((resolve) => {
    const req = http.request(
      target,
      {
        method: "POST",
        agent,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      },
      (res) => {
        res.resume();
        res.on("end", () => {
          if (res.statusCode === 200) answered++;
          else failed++;
          resolve(undefined);
        });
      },
    );
    req.on("error", () => {
      failed++;
      resolve(undefined);
    });
    req.end(body);
  });
}

/** @param {number} n */
async function connection(n) {
  for (let i = 0; !stop; i++) await post(1 + ((n * 31 + i) % 1000));
}
port.postMessage({ type: "ready" });
await Promise.all(Array.from({ length: connections }, (_, n) => connection(n)));
agent.destroy();
port.postMessage({ type: "done", answered, failed });
