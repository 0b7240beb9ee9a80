/**
 * The many-database baseline, run as a process of its own: a bare node:http + libsql handler over
 * a folder of database files, one process or a `node:cluster` of them. A request to
 * `/db/<org>/<name>/...` runs its Hrana body's first statement on `<dir>/<name>.db` (opened on
 * first use, kept open) and answers plain JSON: no auth, no streams, no Hrana encoding, no
 * metering, no frame log. Processes of a cluster each open every file (SQLite's own locking
 * between them, with a busy timeout) and take connections in turn from the primary.
 *
 * Input (argv[2], JSON): { dir, processes }. Prints `{"url": ..., "pids": [...]}` once every
 * process listens. Stops on SIGTERM.
 */
import cluster from "node:cluster";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import Database from "libsql";

interface Options {
  dir: string;
  processes: number;
}

const options = JSON.parse(process.argv[2] ?? "{}") as Options;

interface Open {
  db: Database.Database;
  statements: Map<string, Database.Statement>;
}

function serve(): http.Server {
  const open = new Map<string, Open>();
  const prepared = (name: string, sql: string) => {
    let o = open.get(name);
    if (!o) {
      // Several processes may write one file: wait for its lock rather than fail at once.
      const db = new Database(path.join(options.dir, `${name}.db`), { timeout: 5000 });
      db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
      o = { db, statements: new Map() };
      open.set(name, o);
    }
    let s = o.statements.get(sql);
    if (!s) {
      s = o.db.prepare(sql);
      if (s.reader) s.raw(true).safeIntegers(true);
      o.statements.set(sql, s);
    }
    return s;
  };
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let status = 200;
      let body: string;
      try {
        const name = (req.url ?? "").split("/")[3] ?? "";
        const pipeline = JSON.parse(Buffer.concat(chunks).toString()) as {
          requests: Array<{ stmt?: { sql: string; args: Array<{ value: string }> } }>;
        };
        const stmt = pipeline.requests[0]!.stmt!;
        const s = prepared(name, stmt.sql);
        const args = stmt.args.map((a) => BigInt(a.value));
        const out = s.reader ? { rows: (s.all(args) as unknown[][]).map((r) => r.map(String)) } : s.run(args);
        body = JSON.stringify(out, (_k, v) => (typeof v === "bigint" ? String(v) : v));
      } catch (e) {
        status = 500;
        body = JSON.stringify({ error: String(e) });
      }
      res.writeHead(status, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
      });
      res.end(body);
    });
  });
}

function listen(server: http.Server, port: number): Promise<number> {
  return new Promise((resolve) =>
    server.listen(port, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
  );
}

if (options.processes <= 1) {
  const port = await listen(serve(), 0);
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}`, pids: [process.pid] })}\n`);
} else if (cluster.isPrimary) {
  // Round robin: the primary accepts and hands each connection to the next process.
  cluster.schedulingPolicy = cluster.SCHED_RR;
  const workers = Array.from({ length: options.processes }, () => cluster.fork());
  const ports = await Promise.all(
    workers.map(
      (w) => new Promise<number>((resolve) => w.once("message", (m: { port: number }) => resolve(m.port))),
    ),
  );
  const pids = [process.pid, ...workers.map((w) => w.process.pid!)];
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${ports[0]}`, pids })}\n`);
  process.once("SIGTERM", () => {
    for (const w of workers) w.kill("SIGTERM");
    process.exit(0);
  });
} else {
  // Port 0 from every worker: the primary gives them all the same port.
  const port = await listen(serve(), 0);
  process.send!({ port });
}
