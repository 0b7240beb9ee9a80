// Tenant B's probe, in a worker thread of the test process: its own event loop, so what the test
// does meanwhile (tenant A's clients encoding and decoding their requests) doesn't delay it.
// Plain JavaScript: a worker runs outside the test runner's TypeScript transform.
import { parentPort, workerData } from "node:worker_threads";
import { createClient } from "@libsql/client";

const { url, token, kind, gapMs, warmup, loops } = workerData;
const port = /** @type {import("node:worker_threads").MessagePort} */ (parentPort);
const client = createClient({ url, authToken: token });
const run =
  kind === "write"
    ? () => client.execute({ sql: "INSERT INTO log (v) VALUES (?)", args: ["b"] })
    : () =>
        client.execute({
          sql: "SELECT v FROM kv WHERE id = ?",
          args: [1 + Math.floor(Math.random() * 1000)],
        });
let stop = false;
port.on("message", (m) => {
  if (m === "stop") stop = true;
});
for (let i = 0; i < warmup; i++) await run();
port.postMessage({ type: "ready" });
/** @type {number[]} */
const ms = [];
/** @type {string[]} */
const errors = [];
// A few loops at once: more samples in the same seconds, so the 99th percentile is not simply
// the slowest one (a single moment this process wasn't scheduled, on a shared machine).
async function loop() {
  while (!stop) {
    const t = performance.now();
    try {
      await run();
      ms.push(performance.now() - t);
    } catch (e) {
      const err = /** @type {{ code?: string, message?: string }} */ (e);
      errors.push(String(err?.code ?? err?.message ?? e));
    }
    await new Promise((r) => setTimeout(r, gapMs));
  }
}
await Promise.all(Array.from({ length: loops ?? 1 }, loop));
client.close();
port.postMessage({ type: "done", ms, errors });
