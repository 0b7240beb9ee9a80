import { type Logger, pino } from "pino";

export type { Logger };

/**
 * Structured JSON logs. Authorization headers and anything named like a secret are redacted, so a
 * token can't reach the log even if a future log line includes a request or config object.
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
        ],
        censor: "[redacted]",
      },
    },
    destination ?? process.stdout,
  );
}
