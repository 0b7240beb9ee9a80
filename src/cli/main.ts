#!/usr/bin/env node
// The `shoal` command (package.json "bin"). The CLI's composition root: the one place in src/cli
// that reads process.env and the process's streams.
import { runCli } from "./program.js";

let serving = false;
const startServer = async () => {
  const { runFromCommandLine } = await import("../main.js");
  // Arguments after `start` are the CLI's to parse; the server reads its settings from the environment.
  await runFromCommandLine([]);
  serving = true;
};

const code = await runCli(
  process.argv.slice(2),
  { env: process.env, stdin: process.stdin, stdout: process.stdout, stderr: process.stderr },
  startServer,
);
// A running server ends on a signal; every other command ends here, whatever handles (a
// terminal's input, pooled HTTP connections) are still open.
if (!serving) process.exit(code);
