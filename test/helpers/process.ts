import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, mkdirSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "../..");

export interface ShoalProcess {
  proc: ChildProcess;
  url: string;
  /** Standard output and error together, as they arrived. */
  output(): string;
  /** Standard output alone (the JSON log lines). */
  stdout(): string;
  /** Standard error alone. */
  stderr(): string;
  /** Resolves with the exit code (or the signal name) once the process ends. */
  exited: Promise<number | string>;
}

/**
 * A test's teardown: kills `running` (if any), waits for it to end, and removes `dir`. Its shard
 * processes end once they see it gone and may still write a file meanwhile, which would make a
 * plain recursive removal fail with ENOTEMPTY: the removal is tried again then.
 */
export async function killAndRemove(
  running: ShoalProcess | undefined,
  dir: string | undefined,
): Promise<void> {
  running?.proc.kill("SIGKILL");
  await running?.exited;
  if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
}

/**
 * Runs `src/main.ts` as its own process (or, with `args`, another entry such as the CLI's
 * `src/cli/main.ts start`, which `npm start` runs), and waits until it is ready.
 */
export async function spawnShoal(
  env: Record<string, string>,
  timeoutMs = 20_000,
  args: string[] = ["src/main.ts"],
  /** A lower limit on the process's open files (`ulimit -n`), for tests of the descriptor budget. */
  openFiles?: number,
): Promise<ShoalProcess> {
  const node = [process.execPath, "--import", "tsx", ...args];
  const [cmd, ...argv] =
    openFiles === undefined ? node : ["/bin/sh", "-c", `ulimit -n ${openFiles} && exec "$@"`, "sh", ...node];
  const proc = spawn(cmd!, argv, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", SHOAL_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  // SHOAL_TEST_LOG_DIR keeps every process's output in a file, for a failure seen only under load.
  const logDir = process.env.SHOAL_TEST_LOG_DIR;
  if (logDir) mkdirSync(logDir, { recursive: true });
  const keep = logDir
    ? createWriteStream(path.join(logDir, `${env.SHOAL_NODE_ID ?? "shoal"}-${proc.pid}.log`))
    : undefined;
  let out = "";
  let stdout = "";
  let stderr = "";
  proc.stdout?.on("data", (d: Buffer) => {
    keep?.write(d);
    out += d.toString();
    stdout += d.toString();
  });
  proc.stderr?.on("data", (d: Buffer) => {
    keep?.write(d);
    out += d.toString();
    stderr += d.toString();
  });
  const exited = new Promise<number | string>((resolve) =>
    proc.once("exit", (code, signal) => resolve(code ?? signal ?? -1)),
  );
  const url = await readyUrl(proc, exited, timeoutMs, () => out);
  return { proc, url, output: () => out, stdout: () => stdout, stderr: () => stderr, exited };
}

/**
 * The URL from the "shoal is ready" line of `proc`'s standard output. Only the lines that arrive
 * before it are looked at, once each: a server at `info` logs every data plane request, and
 * searching all it had written on each new chunk took a test's thread whole during a flood
 * (megabytes scanned per chunk) and stalled everything the test timed.
 */
export function readyUrl(
  proc: ChildProcess,
  exited: Promise<number | string>,
  timeoutMs: number,
  output: () => string,
): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let partial = "";
    const finish = (error?: Error, url?: string) => {
      clearTimeout(timer);
      proc.stdout?.off("data", check);
      if (error) reject(error);
      else resolve(url!);
    };
    const timer = setTimeout(() => finish(new Error(`shoal was not ready in time:\n${output()}`)), timeoutMs);
    function check(d: Buffer) {
      const lines = (partial + d.toString()).split("\n");
      partial = lines.pop()!;
      for (const line of lines) {
        const m = /"url":"(https?:\/\/[^"]+)"[^\n]*"msg":"shoal is ready"/.exec(line);
        if (m?.[1]) return finish(undefined, m[1]);
      }
    }
    proc.stdout?.on("data", check);
    exited.then((code) => finish(new Error(`shoal exited with ${code} before it was ready:\n${output()}`)));
  });
}

/** Runs `src/main.ts` (with `args`) expecting it to exit at start; returns its exit code and output. */
export async function runShoalExpectingFailure(
  env: Record<string, string>,
  args: string[] = [],
): Promise<{ code: number; output: string }> {
  const proc = spawn(process.execPath, ["--import", "tsx", "src/main.ts", ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", SHOAL_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  proc.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  proc.stderr?.on("data", (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number>((resolve) => proc.once("exit", (c) => resolve(c ?? -1)));
  return { code, output: out };
}
