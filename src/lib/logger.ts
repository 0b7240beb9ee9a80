import { type Logger, pino } from "pino";
import { redactSecrets } from "./log-redaction.js";

export type { Logger };

/**
 * Where a shard process's log lines go. Where the node logs to its own standard output (as it runs
 * in production), none: the shard writes to that same output itself, each line in one write (see
 * ADR 0020). Relaying them through the primary process took it 20 µs per line, a data-plane
 * request each at `info`, and made that one process the node's limit. Where the node logs
 * elsewhere (a test's stream), the lines are written there, whole.
 */
export function shardLogLines(log: Logger): ((line: string) => void) | undefined {
  const dest = (log as unknown as Record<symbol, NodeJS.WritableStream | undefined>)[pino.symbols.streamSym];
  if (!dest || dest === process.stdout) return undefined;
  return (line) => dest.write(`${line}\n`);
}

/**
 * Structured JSON logs. Authorization headers and anything named like a secret are redacted
 * (`redactSecrets`), so a token or an encryption key can't reach the log even if a future log line
 * includes a request or config object.
 */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  const log = pino(
    {
      level,
      base: { service: "shoal" },
      formatters: { log: redactSecrets, bindings: redactSecrets },
    },
    destination ?? stdoutKeepingOn(),
  );
  // pino gives a child's own fields no formatter: they are cleaned here, on the way in. Children
  // inherit this method from the logger they come from, so a child's child is cleaned too.
  const child = log.child;
  log.child = function (this: Logger, bindings, options) {
    return child.call(this, redactSecrets(bindings), options);
  } as Logger["child"];
  return log;
}

/**
 * Standard output, with its write errors heard: when whatever reads it goes away (a log collector
 * restarting), the EPIPE would otherwise end the process. Lines are lost until a new reader comes;
 * the service goes on.
 */
function stdoutKeepingOn(): NodeJS.WritableStream {
  if (process.stdout.listenerCount("error") === 0) process.stdout.on("error", () => {});
  return process.stdout;
}
