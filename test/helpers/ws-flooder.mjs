// Tenant A's flood of point reads over Hrana WebSockets, in a worker thread of the test process:
// `connections` sockets, each with one stream, sending its next read as soon as the last is
// answered. Raw messages over the `ws` package, so the flood costs this thread little.
import { parentPort, workerData } from "node:worker_threads";
import WebSocket from "ws";

const { url, token, connections } = workerData;
const port = /** @type {import("node:worker_threads").MessagePort} */ (parentPort);
let stop = false;
let answered = 0;
let failed = 0;
port.on("message", (m) => {
  if (m === "stop") stop = true;
});

/** One socket: hello, a stream, then reads one after another until told to stop. @param {number} n */
function socket(n) {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, ["hrana3"]);
    let next = 1;
    let i = 0;
    const read = () => {
      const id = 1 + ((n * 31 + i++) % 1000);
      ws.send(
        JSON.stringify({
          type: "request",
          request_id: next++,
          request: {
            type: "execute",
            stream_id: 1,
            stmt: { sql: "SELECT v FROM kv WHERE id = ?", args: [{ type: "integer", value: String(id) }] },
          },
        }),
      );
    };
    ws.on("open", () => {
      ws.send(JSON.stringify({ type: "hello", jwt: token }));
      ws.send(
        JSON.stringify({
          type: "request",
          request_id: next++,
          request: { type: "open_stream", stream_id: 1 },
        }),
      );
      read();
    });
    ws.on("message", (data) => {
      const m = JSON.parse(data.toString());
      // The hello's and the stream's answers: the first read is already on its way.
      if (m.type === "hello_ok" || m.response?.type === "open_stream") return;
      if (m.type === "response_ok" && m.response?.type === "execute") answered++;
      else failed++;
      if (stop) ws.close();
      else read();
    });
    ws.on("error", () => {
      failed++;
    });
    ws.on("close", () => resolve(undefined));
  });
}

port.postMessage({ type: "ready" });
await Promise.all(Array.from({ length: connections }, (_, n) => socket(n)));
port.postMessage({ type: "done", answered, failed });
