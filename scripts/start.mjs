// `npm start`: runs `shoal start` from dist/, in this very process (package.json starts it with `exec`, so
// SIGTERM sent to npm reaches it). dist/ is built at install (npm ci's prepare step); it is built
// again here only when a source changed since, so a start normally takes no compiler.
import { buildIfStale } from "./build.mjs";

if (!buildIfStale(true)) process.exit(1);
// `npm start` is `shoal start`: the same command, with any arguments npm passed after it.
process.argv.splice(2, 0, "start");
await import("../dist/cli/main.js");
