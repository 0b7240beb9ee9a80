import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type Config, loadConfig } from "./config.js";
import { StartError } from "./errors.js";
import { createLogger } from "./lib/logger.js";
import { parseArguments, usage } from "./start/command-line.js";
import { type Shoal, startShoal } from "./start/lifecycle.js";

// The process's entry: tests, the bench and `npm start` start Shoal through this file.
export { type Shoal, type StartOptions, startShoal } from "./start/lifecycle.js";
// `shoal admin store copy`, which the CLI loads from here as it loads the server for `shoal start`.
export { copyControlPlane } from "./start/store-copy.js";

async function readVersion(): Promise<string> {
  const pkg = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "package.json");
  return (JSON.parse(await readFile(pkg, "utf8")) as { version: string }).version;
}

/**
 * Runs Shoal as a command: `--help` and `--version` print and exit, touching nothing; otherwise
 * it starts with the settings in the environment and runs until SIGTERM or SIGINT. A start that
 * fails for a known reason prints one line and exits 1 or 2 (see `StartError`); anything else
 * prints its stack and exits 1. Resolves once the server is up (true), or once `--help` or
 * `--version` printed (false).
 */
export async function runFromCommandLine(argv: readonly string[] = process.argv.slice(2)): Promise<boolean> {
  const fail = (message: string, code: number): never => {
    process.stderr.write(`shoal: ${message}\n`);
    process.exit(code);
  };
  const action = parseArguments(argv);
  const version = await readVersion();
  if (action.kind === "bad") return fail(action.message, 2);
  if (action.kind !== "start") {
    process.stdout.write(action.kind === "help" ? usage(version) : `shoal ${version}\n`);
    return false;
  }
  let config: Config;
  try {
    config = loadConfig(process.env, version);
  } catch (e) {
    return fail(e instanceof Error ? e.message : String(e), 2);
  }
  // Every file and folder Shoal makes is its own alone: databases, their WAL and SHM, keys, logs.
  process.umask(0o077);
  // The driver's thread pool (tokio) reads its size once, when the process first opens a database:
  // set it before anything does. Statements run in the shards, each with its own pool; here the
  // pool runs the location workers' replica syncs, each of which holds a thread while it waits
  // for a shard's answer: one for each location, so a burst of syncs (every replica pulls after a
  // restart) can't take every thread, plus two for the control-plane store.
  process.env.TOKIO_WORKER_THREADS = String(config.locations.length + 2);
  const log = createLogger(config.logLevel);
  let shoal: Shoal;
  try {
    shoal = await startShoal(config, { log });
  } catch (e) {
    if (e instanceof StartError) return fail(e.message, e.exitCode);
    return fail(`failed to start: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`, 1);
  }
  const stop = (signal: string) => {
    const started = performance.now();
    log.info({ signal }, "shutting down");
    // A second signal while draining means "now".
    process.once(signal, () => process.exit(1));
    shoal.close().then(
      () => {
        // The last line: an operator (or a supervisor's log) sees the stop finished, and how long it took.
        log.info({ signal, ms: Math.round(performance.now() - started) }, "stopped");
        process.exit(0);
      },
      (e: unknown) => {
        log.error({ err: e }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  // A renewed certificate is taken up without a restart (the files are also watched for changes).
  // Without TLS, SIGHUP keeps its default meaning: a closed terminal ends the server it started.
  if (config.tls) process.on("SIGHUP", () => shoal.reloadTls("SIGHUP"));
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
  return true;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runFromCommandLine().catch((e: unknown) => {
    process.stderr.write(`shoal: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
}
