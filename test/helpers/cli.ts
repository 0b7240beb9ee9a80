import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { build } from "esbuild";
import { expect } from "vitest";
import { type ShoalProcess, spawnShoal } from "./process.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
export const CLI_ADMIN_TOKEN = "cli-test-admin-token-0123456789abcdef";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  input?: string;
  env?: Record<string, string>;
  cwd?: string;
}

/**
 * The `shoal` command from the current source, compiled once per test file with esbuild: running
 * it through tsx costs over a second per command, and the suite runs a hundred of them. It is
 * written two folders below the repository so that it finds package.json as the built one does.
 */
async function bundleCli(): Promise<{ file: string; dir: string }> {
  const dir = path.join(ROOT, `dist-test-${process.pid}`);
  const file = path.join(dir, "cli", "main.mjs");
  await build({
    entryPoints: [path.join(ROOT, "src/cli/main.ts")],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    // `shoal start` loads the server; the tests start it from source instead (see start()).
    external: ["../main.js"],
    outfile: file,
    logLevel: "silent",
  });
  return { file, dir };
}

/** A real Shoal started with `shoal start`, and the `shoal` command logged in to it. */
export class CliHarness {
  private constructor(
    readonly server: ShoalProcess,
    readonly home: string,
    readonly dataDir: string,
    private readonly cli: { file: string; dir: string },
  ) {}

  get url(): string {
    return this.server.url;
  }

  /** The config file the commands use (the user's home is a temp folder). */
  get configFile(): string {
    return path.join(this.home, ".config", "shoal", "config.json");
  }

  static async start(env: Record<string, string> = {}): Promise<CliHarness> {
    const home = await mkdtemp(path.join(tmpdir(), "shoal-cli-home-"));
    const dataDir = path.join(home, "data");
    const [cli, server] = await Promise.all([
      bundleCli(),
      spawnShoal(
        {
          SHOAL_DATA_DIR: dataDir,
          SHOAL_ADMIN_TOKEN: CLI_ADMIN_TOKEN,
          SHOAL_DB_DOMAIN: "shoal.test",
          ...env,
        },
        30_000,
        ["src/cli/main.ts", "start"],
      ),
    ]);
    const h = new CliHarness(server, home, dataDir, cli);
    const login = await h.run(["login", server.url, "--token", CLI_ADMIN_TOKEN]);
    expect(login.code, login.stderr).toBe(0);
    return h;
  }

  /** The environment of every command: a home of its own, nothing from the test's own. */
  env(extra: Record<string, string> = {}): Record<string, string> {
    return { PATH: process.env.PATH ?? "", HOME: this.home, TERM: "dumb", ...extra };
  }

  /** Runs `shoal <args>` as its own process, with `input` on its standard input. */
  run(args: string[], opts: RunOptions = {}): Promise<CliResult> {
    const proc = spawn(process.execPath, [this.cli.file, ...args], {
      cwd: opts.cwd ?? this.home,
      env: this.env(opts.env),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    proc.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    proc.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    proc.stdin.on("error", () => {});
    proc.stdin.end(opts.input ?? "");
    return new Promise((resolve) =>
      proc.once("close", (code) => resolve({ code: code ?? -1, stdout, stderr })),
    );
  }

  /** Runs a command that must succeed and answers its standard output. */
  async ok(args: string[], opts: RunOptions = {}): Promise<string> {
    const r = await this.run(args, opts);
    expect(r.code, `shoal ${args.join(" ")}\n${r.stderr}`).toBe(0);
    return r.stdout;
  }

  /** Runs a command with --json that must succeed and answers what it printed, parsed. */
  async json<T = any>(args: string[], opts: RunOptions = {}): Promise<T> {
    return JSON.parse(await this.ok([...args, "--json"], opts)) as T;
  }

  /** Runs a command that must fail with exit code 1 and answers its standard error. */
  async fails(args: string[], opts: RunOptions = {}): Promise<string> {
    const r = await this.run(args, opts);
    expect(r.code, `shoal ${args.join(" ")} should fail\n${r.stdout}`).toBe(1);
    return r.stderr;
  }

  /** The command line of the bundled CLI, for running it under script(1). */
  commandLine(args: string[]): string {
    const q = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
    return [process.execPath, this.cli.file, ...args].map(q).join(" ");
  }

  async close(): Promise<void> {
    this.server.proc.kill("SIGTERM");
    await this.server.exited;
    await rm(this.home, { recursive: true, force: true });
    await rm(this.cli.dir, { recursive: true, force: true });
  }
}
