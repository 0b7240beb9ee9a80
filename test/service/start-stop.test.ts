import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { readyUrl, runShoalExpectingFailure } from "../helpers/process.js";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");
const STAMP = path.join(ROOT, "dist", ".build-stamp");
const MAIN = path.join(ROOT, "dist", "main.js");
let dir: string;
const spawned: ChildProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "shoal-start-"));
  // What `npm ci` does at install (its prepare step); a no-op when dist/ is current.
  await run(process.execPath, ["scripts/build.mjs", "--if-stale"], { cwd: ROOT });
}, 240_000);
afterEach(() => {
  // Whatever a failing test left running, npm and the server under it.
  for (const p of spawned.splice(0)) {
    for (const child of childrenOf(p.pid ?? -1)) process.kill(child, "SIGKILL");
    p.kill("SIGKILL");
  }
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Process ids whose parent is `pid`, from /proc. */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

function env(extra: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", SHOAL_PORT: "0", ...extra };
}

describe("npm start", () => {
  it("starts from dist/ without compiling, and SIGTERM to npm stops the server", async () => {
    const built = [statSync(STAMP).mtimeMs, statSync(MAIN).mtimeMs];
    const npm = spawn("npm", ["start"], {
      cwd: ROOT,
      env: env({ SHOAL_DATA_DIR: path.join(dir, "npm-start"), SHOAL_LOG_LEVEL: "info" }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    spawned.push(npm);
    let out = "";
    npm.stdout?.on("data", (d: Buffer) => (out += d.toString()));
    npm.stderr?.on("data", (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | string>((resolve) =>
      npm.once("exit", (code, signal) => resolve(code ?? signal ?? -1)),
    );
    const url = await readyUrl(npm, exited, 60_000, () => out);
    expect(out).not.toContain("building dist/");
    expect([statSync(STAMP).mtimeMs, statSync(MAIN).mtimeMs]).toEqual(built);
    expect((await fetch(`${url}/health`)).status).toBe(200);
    // npm runs the script through `sh -c`; `exec` puts node in the shell's place, so npm's child
    // is the server itself and the signal npm passes on reaches it.
    const [server] = childrenOf(npm.pid ?? -1);
    expect(readFileSync(`/proc/${server}/cmdline`, "utf8").split("\0")[0]).toMatch(/node$/);

    npm.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(out).toContain('"msg":"shutting down"');
    // The last line says the stop finished.
    expect(out.trim().split("\n").at(-1)).toMatch(/"signal":"SIGTERM".*"msg":"stopped"/);
    await expect(fetch(`${url}/health`)).rejects.toThrow();
    expect(existsSync(`/proc/${server}`)).toBe(false);
  }, 90_000);
});

describe("the command line", () => {
  it("prints --version and --help and exits, creating nothing", async () => {
    const data = path.join(dir, "never-created");
    const opts = { cwd: ROOT, env: env({ SHOAL_DATA_DIR: data }) };
    const version = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")).version;
    expect((await run(process.execPath, ["dist/main.js", "--version"], opts)).stdout).toBe(
      `shoal ${version}\n`,
    );
    const help = (await run(process.execPath, ["dist/main.js", "--help"], opts)).stdout;
    expect(help).toContain("Usage: shoal");
    expect(help).toContain("SHOAL_DATA_DIR");
    expect(existsSync(data)).toBe(false);
    const bad = await runShoalExpectingFailure({ SHOAL_DATA_DIR: data }, ["--port=1"]);
    expect(bad.code).toBe(2);
    expect(bad.output).toContain('unknown argument "--port=1"');
    expect(bad.output).toContain("set SHOAL_PORT=1 instead");
    expect(existsSync(data)).toBe(false);
  });

  it("is the same through npm start and shoal start: --help lists the settings, --port says which one is meant", async () => {
    const data = path.join(dir, "never-created-either");
    const opts = { cwd: ROOT, env: env({ SHOAL_DATA_DIR: data }) };
    const viaNpm = await run("npm", ["start", "--silent", "--", "--help"], opts);
    expect(viaNpm.stdout).toContain("Usage: shoal start");
    expect(viaNpm.stdout).toContain("SHOAL_DATA_DIR");
    // The bin file itself, run as npm's link in node_modules/.bin runs it: executable after a build.
    const cli = path.join(ROOT, "dist", "cli", "main.js");
    expect(statSync(cli).mode & 0o111).not.toBe(0);
    expect((await run(cli, ["start", "--help"], opts)).stdout).toBe(viaNpm.stdout);
    for (const [command, args] of [
      ["npm", ["start", "--silent", "--", "--port", "9000"]],
      [cli, ["start", "--port", "9000"]],
    ] as const) {
      const refused = await run(command, [...args], opts).then(
        () => ({ code: 0, stderr: "" }),
        (e: { code: number; stderr: string }) => e,
      );
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(
        'shoal: unknown argument "--port": settings are environment variables: set SHOAL_PORT=9000 instead',
      );
    }
    expect(existsSync(data)).toBe(false);
  }, 60_000);

  it("stays executable after a build, which writes dist/ afresh (npx shoal after npm run build)", async () => {
    const { markExecutable } = (await import(path.join(ROOT, "scripts", "build.mjs"))) as {
      markExecutable(staging: string): void;
    };
    // A staging folder as the build leaves it: tsc writes the bin file without the bit.
    const staging = await mkdtemp(path.join(dir, "staging-"));
    mkdirSync(path.join(staging, "cli"));
    writeFileSync(path.join(staging, "cli", "main.js"), "#!/usr/bin/env node\n", { mode: 0o644 });
    markExecutable(staging);
    expect(statSync(path.join(staging, "cli", "main.js")).mode & 0o777).toBe(0o755);
  });

  it("fails on a port in use with one line, before making the data folder", async () => {
    const holder: Server = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    try {
      const port = (holder.address() as { port: number }).port;
      const data = path.join(dir, "port-taken");
      const r = await runShoalExpectingFailure({ SHOAL_DATA_DIR: data, SHOAL_PORT: String(port) });
      expect(r.code).toBe(1);
      expect(r.output.trim().split("\n")).toEqual([
        `shoal: 127.0.0.1:${port} is already in use (another Shoal, or another program, listens there): stop it or set SHOAL_PORT to a free port`,
      ]);
      expect(existsSync(data)).toBe(false);
    } finally {
      holder.close();
    }
  });

  it("names every bad setting at once", async () => {
    const r = await runShoalExpectingFailure({ SHOAL_PORT: "abc", SHOAL_LOCATIONS: "US East" });
    expect(r.code).toBe(2);
    expect(r.output).toContain("SHOAL_PORT: a whole number from 0 to 65535");
    expect(r.output).toContain('SHOAL_LOCATIONS: invalid location code "US East"');
  });

  it("says in one line that PostgreSQL refuses connections, without the password or a stack trace", async () => {
    const closed: Server = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const data = path.join(dir, "pg-down");
    const r = await runShoalExpectingFailure({
      SHOAL_DATA_DIR: data,
      SHOAL_METADATA_URL: `postgres://shoal:hunter2secret@127.0.0.1:${port}/shoal`,
    });
    expect(r.code).toBe(1);
    expect(r.output.trim().split("\n")).toEqual([
      `shoal: the control-plane store at postgres://shoal:***@127.0.0.1:${port}/shoal (SHOAL_METADATA_URL) can't be used: connect ECONNREFUSED 127.0.0.1:${port}`,
    ]);
    expect(existsSync(path.join(data, "admin-token"))).toBe(false);
  });
});
