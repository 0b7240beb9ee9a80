import { SETTING_NAMES } from "../config.js";

/** What the command line asks for: start the server (the default), or print and exit. */
export type Action =
  | { kind: "start" }
  | { kind: "help" }
  | { kind: "version" }
  | { kind: "bad"; message: string };

/** Reads the arguments. Settings are environment variables; the only options print and exit. */
export function parseArguments(argv: readonly string[]): Action {
  if (argv.length === 0) return { kind: "start" };
  const [first, second] = argv as [string, string | undefined];
  if (argv.length === 1 && (first === "--help" || first === "-h")) return { kind: "help" };
  if (argv.length === 1 && (first === "--version" || first === "-v")) return { kind: "version" };
  const hint = settingHint(first, second);
  return {
    kind: "bad",
    message: `unknown argument ${JSON.stringify(first)}: settings are environment variables${hint ? `: set ${hint} instead` : ""} (see --help)`,
  };
}

/**
 * The environment variable an option-like argument was meant as: `--port 9000` or `--port=9000`
 * is `SHOAL_PORT=9000`. Undefined when no setting has that name.
 */
function settingHint(arg: string, next: string | undefined): string | undefined {
  const m = /^--?([a-z][a-z0-9-]*)(?:=(.*))?$/i.exec(arg);
  if (!m) return undefined;
  const name = `SHOAL_${m[1]!.toUpperCase().replaceAll("-", "_")}`;
  if (!SETTING_NAMES.includes(name)) return undefined;
  const value = m[2] ?? (next !== undefined && !next.startsWith("-") ? next : "<value>");
  return `${name}=${value}`;
}

/** The `--help` text: how to run it, and every setting with its default (the README explains each). */
export function usage(version: string): string {
  return `Shoal ${version}: self-hosted libSQL databases with a Turso-compatible API.

Usage: shoal start [--help | --version]   (also: npm start, node dist/main.js)

Starts the server with the settings below, read from the environment. SIGTERM or Ctrl-C stops it
cleanly. GET /health answers while it runs; GET /health/ready while its store and data folder work.

Settings (README.md, "Settings", says what each does):
  SHOAL_HOST                         127.0.0.1
  SHOAL_PORT                         8080
  SHOAL_TLS_CERT                     unset (plain HTTP); a PEM certificate chain: HTTPS and WSS
  SHOAL_TLS_KEY                      unset; the PEM private key of SHOAL_TLS_CERT
  SHOAL_DATA_DIR                     ./data (must not be readable by other users)
  SHOAL_ADMIN_USER                   admin
  SHOAL_ADMIN_EMAIL                  <user>@localhost
  SHOAL_ADMIN_TOKEN                  generated on the first start
  SHOAL_LOCATIONS                    Turso's six aws-* codes
  SHOAL_DB_DOMAIN                    localhost
  SHOAL_LOG_LEVEL                    info
  SHOAL_MAX_CONNECTIONS              512
  SHOAL_DURABILITY                   relaxed
  SHOAL_TRANSACTION_TIMEOUT_MS       5000
  SHOAL_STREAM_IDLE_TIMEOUT_MS       10000
  SHOAL_ENCRYPTION_KEY_IDLE_SECONDS  60 (0: keep no key between requests)
  SHOAL_HISTORY_RETENTION_HOURS      24
  SHOAL_METADATA_URL                 unset (the embedded store in the data folder)
  SHOAL_STORE_TIMEOUT_MS             15000 (PostgreSQL only; 0: no limit)
  SHOAL_RATE_LIMIT                   0 (off)
  SHOAL_RATE_LIMIT_WINDOW_SECONDS    60
  SHOAL_USAGE_FLUSH_INTERVAL_MS      1000
  SHOAL_NODE_ID                      kept in <data>/node-id
  SHOAL_NODE_URL                     the address it listens on
  SHOAL_NODE_LOCATIONS               the whole catalogue
  SHOAL_PRIMARY_LEASE_MS             10000
  SHOAL_FAILOVER_AFTER_MS            0 (off)
  SHOAL_STANDBY_CONFIRM_MS           1000 (0: writes don't wait for standbys on other nodes)
  SHOAL_REPLICA_PULL_TIMEOUT_MS      5000
  SHOAL_DISK_RESERVE_MB              256 (0: no reserve)
  SHOAL_DELETED_RETENTION_HOURS      120 (deleted databases restorable for 5 days; 0: deleted at once)
  SHOAL_JWKS_PRIVATE_ADDRESSES       refuse (or allow: identity providers on private addresses)
  SHOAL_FAILPOINTS                   unset (for fault tests only: places made to fail)
  SHOAL_TRUSTED_PROXIES              none
  SHOAL_METRICS_TOKEN                unset (GET /metrics answers the administrator's token only)
  SHOAL_METRICS_PER_DATABASE         0 (no database label on metrics)
  SHOAL_BACKUP_URL                   unset (no backups); s3://bucket/prefix
  SHOAL_BACKUP_ENDPOINT              AWS S3
  SHOAL_BACKUP_REGION                us-east-1
  SHOAL_BACKUP_ACCESS_KEY_ID         the AWS SDK's chain
  SHOAL_BACKUP_SECRET_ACCESS_KEY     the AWS SDK's chain
  SHOAL_BACKUP_PATH_STYLE            true with an endpoint, else false
  SHOAL_BACKUP_INTERVAL_MS           1000
  SHOAL_BACKUP_SNAPSHOT_INTERVAL_HOURS 6
  SHOAL_BACKUP_RETENTION_HOURS       168
  SHOAL_BACKUP_SEED_REPLICAS         true (replicas of other nodes' primaries start from the bucket)
  SHOAL_WORKERS                      the number of cores, at least 2
  SHOAL_STATEMENT_TIMEOUT_MS         5000
  SHOAL_MAX_RESPONSE_BYTES           10485760 (10 MiB)
  SHOAL_MAX_TOTAL_RESPONSE_BYTES     67108864 (64 MiB)
  SHOAL_SQLITE_HEAP_LIMIT_MB         256
  SHOAL_MAX_STREAMS_PER_DATABASE     256
  SHOAL_MAX_STREAMS_PER_WEBSOCKET    128
  SHOAL_HEADERS_TIMEOUT_MS           10000
  SHOAL_BODY_TIMEOUT_MS              30000

Exit codes: 0 stopped cleanly; 1 could not start for now (port in use, store unreachable) or
failed; 2 the settings or the data folder must change first.
`;
}
