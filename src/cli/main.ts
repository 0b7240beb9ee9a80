#!/usr/bin/env node
// The `shoal` command (package.json "bin"). The CLI's composition root: the one place in src/cli
// that reads process.env and the process's streams.
import type { CopyStore } from "./commands/admin-store.js";
import { runCli } from "./program.js";

let serving = false;
const startServer = async (args: string[]) => {
  const { runFromCommandLine } = await import("../main.js");
  // `shoal start`'s arguments are the server's own (`--help`, `--version`; anything else is refused
  // with a hint, as settings are environment variables).
  serving = await runFromCommandLine(args);
};

// `shoal admin store copy` runs the server's own store code, loaded only when asked for.
const copyStore: CopyStore = async (opts) => (await import("../main.js")).copyControlPlane(opts);

const code = await runCli(
  process.argv.slice(2),
  { env: process.env, stdin: process.stdin, stdout: process.stdout, stderr: process.stderr },
  startServer,
  copyStore,
);
// A running server ends on a signal; every other command ends here, whatever handles (a
// terminal's input, pooled HTTP connections) are still open: once what it printed is flushed,
// since output still queued for a pipe would be lost to exit (a long `db dump` lost its tail).
if (!serving) {
  let pending = 2;
  const done = () => {
    if (--pending === 0) process.exit(code);
  };
  process.stdout.write("", done);
  process.stderr.write("", done);
  // Should a closed stream never call back, don't wait for it for long.
  setTimeout(() => process.exit(code), 5_000);
}
