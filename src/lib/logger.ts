import { type Logger, pino } from "pino";
import { ENCRYPTION_KEY_LOG_PATHS } from "./redact-keys.js";

export type { Logger };

/**
 * Writes whole JSON log lines made elsewhere (the node's shard processes log on their own) to
 * where `log` writes its own, so the node has one log however many processes it runs.
 */
export function logLinesOf(log: Logger): (line: string) => void {
  const dest = (log as unknown as Record<symbol, NodeJS.WritableStream | undefined>)[pino.symbols.streamSym];
  return (line) => {
    if (dest) dest.write(`${line}\n`);
    else process.stdout.write(`${line}\n`);
  };
}

/**
 * Structured JSON logs. Authorization headers and anything named like a secret are redacted, so a
 * token or an encryption key can't reach the log even if a future log line includes a request or config object.
 */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: "shoal" },
      redact: {
        paths: [
          "req.headers.authorization",
          "headers.authorization",
          "authorization",
          "token",
          "*.token",
          "jwt",
          "*.jwt",
          "adminToken",
          "*.adminToken",
          "metricsToken",
          "*.metricsToken",
          // Customers' encryption keys (ADR 0016): the data plane's header, the create body's field.
          ...ENCRYPTION_KEY_LOG_PATHS,
        ],
        censor: "[redacted]",
      },
    },
    destination ?? process.stdout,
  );
}
