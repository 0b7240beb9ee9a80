import { type Logger, pino } from "pino";
import { ENCRYPTION_KEY_LOG_PATHS } from "./redact-keys.js";

export type { Logger };

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
