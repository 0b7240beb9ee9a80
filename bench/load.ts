/**
 * Load generator, run as a child process so it doesn't share the server's event loop.
 * Input (argv[2], JSON): { url, headers, bodies: string[], paths?: string[], sharedPool?, concurrency,
 * warmupMs, durationMs, latencies?: boolean }.
 * Sends POSTs with keep-alive, cycling through `bodies` (and, when given, through `paths`, which
 * replace the URL's path: one load process can spread over many databases, each over connections
 * of its own, as clients of different databases have when each addresses its database by its own
 * hostname, or, with `sharedPool`, all over one pool, as one client with a pool per origin, or a
 * proxy in front, sends them); prints { requests,
 * errors, seconds, p50Ms, p99Ms, answered } as JSON on stdout, `answered` counting the warm-up's
 * answers too (what the server did while it was watched), and with `latencies` every measured
 * latency, so that several load processes' percentiles can be merged.
 */
import http from "node:http";

interface Job {
  url: string;
  headers: Record<string, string>;
  bodies: string[];
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  paths?: string[];
  /** One pool for every path, as one pooled client or a proxy in front keeps. */
  sharedPool?: boolean;
  latencies?: boolean;
}

const job = JSON.parse(process.argv[2] ?? "{}") as Job;
const target = new URL(job.url);
const agent = new http.Agent({ keepAlive: true, maxSockets: job.concurrency });
/** Per database path, its own pool of kept-alive connections (unless the pool is shared). */
const agents = new Map(
  (job.sharedPool ? [] : (job.paths ?? [])).map((p) => [
    p,
    new http.Agent({
      keepAlive: true,
      maxSockets: Math.max(1, Math.ceil(job.concurrency / job.paths!.length)),
    }),
  ]),
);
let measuring = false;
let stop = false;
let requests = 0;
let errors = 0;
let answered = 0;
const latencies: number[] = [];
let next = 0;

function once(): Promise<void> {
  const n = next++;
  const body = job.bodies[n % job.bodies.length]!;
  const p = job.paths ? job.paths[n % job.paths.length]! : target.pathname;
  const started = performance.now();
  return new Promise((resolve) => {
    const req = http.request(
      {
        agent: agents.get(p) ?? agent,
        host: target.hostname,
        port: target.port,
        path: p,
        method: "POST",
        headers: {
          ...job.headers,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume();
        res.on("end", () => {
          if (!stop) answered++;
          if (measuring) {
            if (res.statusCode === 200) requests++;
            else errors++;
            latencies.push(performance.now() - started);
          }
          resolve();
        });
      },
    );
    req.on("error", () => {
      if (measuring) errors++;
      resolve();
    });
    req.end(body);
  });
}

async function worker(): Promise<void> {
  while (!stop) await once();
}

const workers = Array.from({ length: job.concurrency }, () => worker());
await new Promise((r) => setTimeout(r, job.warmupMs));
measuring = true;
const started = performance.now();
await new Promise((r) => setTimeout(r, job.durationMs));
measuring = false;
const seconds = (performance.now() - started) / 1000;
stop = true;
await Promise.all(workers);
agent.destroy();
latencies.sort((a, b) => a - b);
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0;
process.stdout.write(
  JSON.stringify({
    requests,
    errors,
    seconds,
    p50Ms: pct(0.5),
    p99Ms: pct(0.99),
    answered,
    ...(job.latencies ? { latencies: latencies.map((l) => Math.round(l * 1000) / 1000) } : {}),
  }),
);
