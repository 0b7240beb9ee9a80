/**
 * A real, throwaway PostgreSQL 15 server for tests.
 *
 * Recipe (Debian's `postgresql-15` package; `SHOAL_TEST_PG_BIN` points elsewhere if needed):
 * 1. a fresh temp folder, owned by the `postgres` OS user when we run as root, since initdb and
 *    postgres refuse to run as root (they run through `runuser -u postgres`);
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
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { appendFile, chown, mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";

const run = promisify(execFile);
const PG_BIN = process.env.SHOAL_TEST_PG_BIN ?? "/usr/lib/postgresql/15/bin";

export interface PostgresServer {
  /** URL of the server's `postgres` database. */
  url: string;
  /** Creates an empty database and returns its URL. */
  newDatabase(): Promise<string>;
  stop(): Promise<void>;
}

export async function startPostgres(): Promise<PostgresServer> {
  const asRoot = process.getuid?.() === 0;
  const root = await mkdtemp(path.join(tmpdir(), "shoal-pg-"));
  const data = path.join(root, "data");
  const socketDir = path.join(root, "socket");
  const pgCtl = (...args: string[]) => asPostgres(asRoot, root, "pg_ctl", ["-D", data, ...args]);
  try {
    await mkdir(socketDir, { mode: 0o700 });
    if (asRoot) {
      const [uid, gid] = ["-u", "-g"].map((f) => Number(execFileSync("id", [f, "postgres"]).toString()));
      await chown(root, uid!, gid!);
      await chown(socketDir, uid!, gid!);
    }
    await asPostgres(asRoot, root, "initdb", [
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
    throw setupError(e);
  }

  const log = path.join(root, "postgres.log");
  let port = 0;
  for (let attempt = 1; port === 0; attempt++) {
    const candidate = await freePort();
    try {
      await pgCtl("-l", log, "-w", "-t", "30", "-o", `-p ${candidate}`, "start");
      port = candidate;
    } catch (e) {
      if (attempt < 5) continue;
      const tail = await readFile(log, "utf8").catch(() => "");
      await rm(root, { recursive: true, force: true });
      throw new Error(`PostgreSQL did not start: ${(e as Error).message}\n${tail}`);
    }
  }

  const watchdog = startWatchdog(root, command(asRoot, "pg_ctl", ["-D", data, "-m", "immediate", "stop"]));

  const base = `postgres://postgres@127.0.0.1:${port}`;
  let next = 0;
  let stopped = false;
  return {
    url: `${base}/postgres`,
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

function command(asRoot: boolean, bin: string, args: string[]): [string, string[]] {
  const exe = path.join(PG_BIN, bin);
  return asRoot ? ["runuser", ["-u", "postgres", "--", exe, ...args]] : [exe, args];
}

async function asPostgres(asRoot: boolean, cwd: string, bin: string, args: string[]): Promise<void> {
  const [cmd, argv] = command(asRoot, bin, args);
  // cwd: the postgres user may not be allowed into the test's working directory.
  await run(cmd, argv, { cwd, env: { PATH: process.env.PATH ?? "", LANG: "C" } });
}

function setupError(e: unknown): Error {
  const msg = e instanceof Error ? e.message : String(e);
  return new Error(
    `could not set up a PostgreSQL test server with ${PG_BIN} (Debian: apt-get install postgresql-15): ${msg}`,
  );
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
