import { availableParallelism } from "node:os";
import path from "node:path";
import { z } from "zod";
import { BACKUP_SETTING_NAMES, type BackupSettings, readBackupSettings } from "./backup/settings.js";
import { FAILPOINTS, type Failpoint } from "./lib/failpoints.js";
import { canonicalEntry } from "./lib/ip-allowlist.js";

/** One entry of the location catalogue: a code clients send and a human description. */
export interface LocationDef {
  code: string;
  description: string;
}

/** Turso's current location codes, so scripts written for Turso run unchanged against Shoal. */
export const DEFAULT_LOCATIONS: readonly LocationDef[] = [
  { code: "aws-us-east-1", description: "AWS US East (Virginia)" },
  { code: "aws-us-east-2", description: "AWS US East (Ohio)" },
  { code: "aws-us-west-2", description: "AWS US West (Oregon)" },
  { code: "aws-eu-west-1", description: "AWS EU West (Ireland)" },
  { code: "aws-ap-northeast-1", description: "AWS AP Northeast (Tokyo)" },
  { code: "aws-ap-south-1", description: "AWS AP South (Mumbai)" },
];

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  adminUser: string;
  adminEmail: string;
  /** Only read on the first start, when the administrator is created. */
  adminToken: string | undefined;
  locations: readonly LocationDef[];
  /** Database hostnames are `<db>-<org>.<dbDomain>`; may carry a port (`localhost:8080`). */
  dbDomain: string;
  logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  version: string;
  /** Open connections to hosted databases kept across all databases. */
  maxConnections: number;
  /** `relaxed`: a commit survives a crash of Shoal; `strong`: it also survives power loss (fsync per commit). */
  durability: "relaxed" | "strong";
  /** An interactive write transaction is rolled back after this many milliseconds. */
  transactionTimeoutMs: number;
  /** An HTTP stream (baton) unused for this many milliseconds is closed. */
  streamIdleTimeoutMs: number;
  /** How long an encrypted database's verified key stays in memory after its last use; 0: none kept. */
  encryptionKeyIdleSeconds: number;
  /** How long finished replication generations are kept for replicas catching up, in hours. */
  historyRetentionHours: number;
  /** PostgreSQL URL of the control-plane store; unset: the embedded store in the data folder. */
  metadataUrl: string | undefined;
  /** How long a query to the PostgreSQL store may go unanswered before it fails; 0: no limit. */
  storeTimeoutMs: number;
  /** PEM files of the certificate chain and key: the public port then speaks only TLS (HTTPS, WSS). */
  tls?: { certFile: string; keyFile: string } | undefined;
  /** Management API requests each API token may make per window; 0: no limit. */
  rateLimit: number;
  rateLimitWindowSeconds: number;
  /**
   * How often counted usage is written to the store, in milliseconds; plan quotas are judged
   * right after, so this bounds how long an organization can run past a quota before it is blocked.
   */
  usageFlushIntervalMs: number;
  /** This process's name among the nodes sharing the store; unset: one kept in `<data>/node-id`. */
  nodeId: string | undefined;
  /** How other nodes reach this one; unset: the address it listens on. */
  nodeUrl: string | undefined;
  /** Proxies whose `X-Forwarded-For` names the client checked against IP allowlists. */
  trustedProxies: readonly string[];
  /** A bearer token that may read `GET /metrics` (a scraper's), besides the administrator's API token. */
  metricsToken?: string | undefined;
  /** Label statement, row, replication and backup metrics by database id. */
  metricsPerDatabase?: boolean;
  /** Continuous backups to S3-compatible storage (`SHOAL_BACKUP_*`); unset: off. */
  backup: BackupSettings | undefined;
  /** Threads the driver runs statements whose work isn't bounded on (and how many run at once). */
  workers: number;
  /** A statement whose work isn't bounded is interrupted after this many milliseconds. */
  statementTimeoutMs: number;
  /** The most one data-plane response may carry, in bytes. */
  maxResponseBytes: number;
  /** The most all large data-plane responses together may hold while built or unread, in bytes. */
  maxTotalResponseBytes: number;
  /** The most memory SQLite may allocate in the process, in MiB. */
  sqliteHeapLimitMb: number;
  /** Streams one database may have open at once. */
  maxStreamsPerDatabase: number;
  /** Streams one WebSocket connection may have open at once. */
  maxStreamsPerWebSocket: number;
  /** A request's headers must arrive within this many milliseconds. */
  headersTimeoutMs: number;
  /** A SQL request's body must arrive within this many milliseconds. */
  bodyTimeoutMs: number;
  /** Locations this node offers to hold (codes of the catalogue); unset: the whole catalogue. */
  nodeLocations: readonly string[] | undefined;
  /** How long a primary's lease in the store lasts without renewal, in milliseconds. */
  primaryLeaseMs: number;
  /** A group whose primary's lease ran out this long ago fails over by itself; 0: never. */
  failoverAfterMs: number;
  /**
   * How long a write at a primary waits for each standby (a replica on another node) to have it
   * before the standby is dropped; 0: writes don't wait (asynchronous replication).
   */
  standbyConfirmMs: number;
  /** A replica's pull from another node's primary making no progress this long is ended. */
  replicaPullTimeoutMs: number;
  /** Free space kept on the data folder's disk, in MiB: below it, writes that grow databases are refused; 0: none. */
  diskReserveMb: number;
  /** How long deleted databases and groups stay restorable, in hours; 0: deleted at once. */
  deletedRetentionHours: number;
  /** Whether identity providers' key sets may be fetched from loopback, private and link-local addresses. */
  jwksPrivateAddresses: "allow" | "refuse";
  /** Places made to fail on purpose, for fault tests (see lib/failpoints.ts); unset: none. */
  failpoints?: readonly Failpoint[];
}

const CODE = /^[a-z0-9][a-z0-9-]{0,62}$/;
const NAME = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;
const DOMAIN = /^(?=.{1,253}(?::\d{1,5})?$)[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?(?::\d{1,5})?$/;

/**
 * Parses `SHOAL_LOCATIONS`: a comma-separated list of `code` or `code=Description` entries.
 * A bare code gets its code as description.
 */
export function parseLocations(text: string): LocationDef[] {
  const seen = new Set<string>();
  const out: LocationDef[] = [];
  for (const raw of text.split(",")) {
    const entry = raw.trim();
    if (entry === "") continue;
    const eq = entry.indexOf("=");
    const code = (eq === -1 ? entry : entry.slice(0, eq)).trim();
    const description = (eq === -1 ? code : entry.slice(eq + 1)).trim() || code;
    if (!CODE.test(code)) {
      throw new Error(
        `SHOAL_LOCATIONS: invalid location code "${code}" (lowercase letters, digits and dashes)`,
      );
    }
    if (seen.has(code)) throw new Error(`SHOAL_LOCATIONS: location "${code}" is listed twice`);
    seen.add(code);
    out.push({ code, description });
  }
  if (out.length === 0) throw new Error("SHOAL_LOCATIONS: at least one location is required");
  return out;
}

/** A comma-separated setting as its trimmed, non-empty entries. */
function commaList() {
  return z.string().transform((text) =>
    text
      .split(",")
      .map((c) => c.trim())
      .filter((c) => c !== ""),
  );
}

/** An integer setting; the message says what is accepted rather than what zod saw. */
function wholeNumber(min: number, max: number) {
  const error = `a whole number from ${min} to ${max}`;
  return z
    .string()
    .trim()
    .regex(/^-?\d+$/, error)
    .transform(Number)
    .pipe(z.number().min(min, error).max(max, error));
}

function decimalNumber(min: number, max: number) {
  const error = `a number from ${min} to ${max}`;
  return z
    .string()
    .trim()
    .regex(/^-?\d+(\.\d+)?$/, error)
    .transform(Number)
    .pipe(z.number().min(min, error).max(max, error));
}

const EnvSchema = z.object({
  SHOAL_HOST: z.string().min(1).default("127.0.0.1"),
  SHOAL_PORT: wholeNumber(0, 65535).default(8080),
  SHOAL_DATA_DIR: z.string().min(1).default("./data"),
  SHOAL_ADMIN_USER: z
    .string()
    .regex(NAME, "lowercase letters, digits and inner dashes, at most 40 characters")
    .default("admin"),
  SHOAL_ADMIN_EMAIL: z.string().min(3).optional(),
  SHOAL_ADMIN_TOKEN: z
    .string()
    .min(16, "must be at least 16 characters; it guards the whole instance")
    .regex(/^[\x21-\x7e]+$/, "printable ASCII without spaces")
    .optional(),
  // Parsed here, not after: a bad catalogue is reported together with every other bad setting.
  SHOAL_LOCATIONS: z
    .string()
    .transform((text, ctx) => {
      try {
        return parseLocations(text);
      } catch (err) {
        ctx.addIssue({ code: "custom", message: (err as Error).message.replace(/^SHOAL_LOCATIONS: /, "") });
        return z.NEVER;
      }
    })
    .optional(),
  SHOAL_DB_DOMAIN: z
    .string()
    .transform((s) => s.toLowerCase())
    .pipe(z.string().regex(DOMAIN, "a DNS name, optionally with :port"))
    .default("localhost"),
  SHOAL_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  SHOAL_MAX_CONNECTIONS: wholeNumber(1, 100_000).default(512),
  SHOAL_DURABILITY: z.enum(["relaxed", "strong"]).default("relaxed"),
  SHOAL_TRANSACTION_TIMEOUT_MS: wholeNumber(100, 3_600_000).default(5000),
  SHOAL_STREAM_IDLE_TIMEOUT_MS: wholeNumber(100, 3_600_000).default(10_000),
  SHOAL_ENCRYPTION_KEY_IDLE_SECONDS: wholeNumber(0, 86_400).default(60),
  SHOAL_HISTORY_RETENTION_HOURS: decimalNumber(0, 24 * 365).default(24),
  SHOAL_RATE_LIMIT: wholeNumber(0, 1_000_000_000).default(0),
  SHOAL_RATE_LIMIT_WINDOW_SECONDS: wholeNumber(1, 86_400).default(60),
  SHOAL_USAGE_FLUSH_INTERVAL_MS: wholeNumber(10, 60_000).default(1000),
  SHOAL_METADATA_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "a PostgreSQL URL: postgres://user:password@host:port/database")
    .optional(),
  SHOAL_TLS_CERT: z.string().optional(),
  SHOAL_TLS_KEY: z.string().optional(),
  SHOAL_NODE_ID: z
    .string()
    .regex(CODE, "lowercase letters, digits and dashes, at most 63 characters")
    .optional(),
  SHOAL_TRUSTED_PROXIES: z
    .string()
    .transform((text, ctx) => {
      const out: string[] = [];
      for (const entry of text.split(",").filter((e) => e.trim() !== "")) {
        try {
          out.push(canonicalEntry(entry));
        } catch (err) {
          ctx.addIssue({ code: "custom", message: (err as Error).message });
          return z.NEVER;
        }
      }
      return out;
    })
    .optional(),
  SHOAL_METRICS_TOKEN: z
    .string()
    .min(16, "must be at least 16 characters")
    .regex(/^[\x21-\x7e]+$/, "printable ASCII without spaces")
    .optional(),
  SHOAL_METRICS_PER_DATABASE: z
    .enum(["0", "1", "false", "true"], "1 or true to label metrics by database, 0 or false not to")
    .transform((v) => v === "1" || v === "true")
    .optional(),
  SHOAL_WORKERS: wholeNumber(1, 1024).default(Math.max(2, availableParallelism())),
  SHOAL_STATEMENT_TIMEOUT_MS: wholeNumber(100, 3_600_000).default(5000),
  SHOAL_MAX_RESPONSE_BYTES: wholeNumber(65_536, 1_073_741_824).default(10 * 1024 * 1024),
  SHOAL_MAX_TOTAL_RESPONSE_BYTES: wholeNumber(1_048_576, 68_719_476_736).default(64 * 1024 * 1024),
  SHOAL_SQLITE_HEAP_LIMIT_MB: wholeNumber(32, 1_048_576).default(256),
  SHOAL_MAX_STREAMS_PER_DATABASE: wholeNumber(1, 100_000).default(256),
  SHOAL_MAX_STREAMS_PER_WEBSOCKET: wholeNumber(1, 100_000).default(128),
  SHOAL_HEADERS_TIMEOUT_MS: wholeNumber(1000, 3_600_000).default(10_000),
  SHOAL_BODY_TIMEOUT_MS: wholeNumber(1000, 3_600_000).default(30_000),
  SHOAL_NODE_LOCATIONS: commaList()
    .pipe(z.array(z.string().regex(CODE, "location codes separated by commas")).min(1))
    .optional(),
  SHOAL_STORE_TIMEOUT_MS: wholeNumber(0, 3_600_000).default(15_000),
  SHOAL_PRIMARY_LEASE_MS: wholeNumber(1000, 3_600_000).default(10_000),
  SHOAL_FAILOVER_AFTER_MS: wholeNumber(0, 86_400_000).default(0),
  SHOAL_STANDBY_CONFIRM_MS: wholeNumber(0, 600_000).default(1000),
  SHOAL_REPLICA_PULL_TIMEOUT_MS: wholeNumber(100, 3_600_000).default(5000),
  SHOAL_DISK_RESERVE_MB: wholeNumber(0, 1_048_576).default(256),
  SHOAL_DELETED_RETENTION_HOURS: wholeNumber(0, 8760).default(120),
  SHOAL_JWKS_PRIVATE_ADDRESSES: z.enum(["allow", "refuse"], "allow or refuse").default("refuse"),
  SHOAL_FAILPOINTS: commaList()
    .pipe(z.array(z.enum(FAILPOINTS, `failpoint names separated by commas: ${FAILPOINTS.join(", ")}`)))
    .optional(),
  SHOAL_NODE_URL: z
    .string()
    .regex(/^https?:\/\/[^/\s]+\/?$/, "a base URL such as http://10.0.0.5:8080")
    .transform((s) => s.replace(/\/$/, ""))
    .optional(),
});

/** Every setting's variable name, for `--help` and the docs' checks. */
export const SETTING_NAMES: readonly string[] = [...Object.keys(EnvSchema.shape), ...BACKUP_SETTING_NAMES];

/** Reads the settings once. Only `main.ts` and this module look at `process.env`. */
export function loadConfig(env: NodeJS.ProcessEnv, version: string): Config {
  const present = Object.fromEntries(
    Object.entries(env).filter(([k, v]) => k.startsWith("SHOAL_") && v !== ""),
  );
  const parsed = EnvSchema.safeParse(present);
  const backup = readBackupSettings(present);
  const lines = parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  lines.push(...backup.problems);
  if (!present.SHOAL_TLS_CERT !== !present.SHOAL_TLS_KEY) {
    lines.push(
      "SHOAL_TLS_CERT and SHOAL_TLS_KEY: set both (the certificate chain and its private key, PEM files) or neither",
    );
  }
  if (!parsed.success || lines.length > 0) {
    throw new Error(`invalid configuration:\n  ${lines.join("\n  ")}`);
  }
  const e = parsed.data;
  const catalogue = new Set((e.SHOAL_LOCATIONS ?? DEFAULT_LOCATIONS).map((l) => l.code));
  const unknown = (e.SHOAL_NODE_LOCATIONS ?? []).filter((c) => !catalogue.has(c));
  if (unknown.length > 0) {
    throw new Error(
      `invalid configuration:\n  SHOAL_NODE_LOCATIONS: ${unknown.join(", ")} not in the catalogue (SHOAL_LOCATIONS)`,
    );
  }
  return Object.freeze({
    host: e.SHOAL_HOST,
    port: e.SHOAL_PORT,
    dataDir: path.resolve(e.SHOAL_DATA_DIR),
    adminUser: e.SHOAL_ADMIN_USER,
    adminEmail: e.SHOAL_ADMIN_EMAIL ?? `${e.SHOAL_ADMIN_USER}@localhost`,
    adminToken: e.SHOAL_ADMIN_TOKEN,
    locations: Object.freeze(e.SHOAL_LOCATIONS ?? [...DEFAULT_LOCATIONS]),
    dbDomain: e.SHOAL_DB_DOMAIN,
    logLevel: e.SHOAL_LOG_LEVEL,
    version,
    maxConnections: e.SHOAL_MAX_CONNECTIONS,
    durability: e.SHOAL_DURABILITY,
    transactionTimeoutMs: e.SHOAL_TRANSACTION_TIMEOUT_MS,
    streamIdleTimeoutMs: e.SHOAL_STREAM_IDLE_TIMEOUT_MS,
    encryptionKeyIdleSeconds: e.SHOAL_ENCRYPTION_KEY_IDLE_SECONDS,
    historyRetentionHours: e.SHOAL_HISTORY_RETENTION_HOURS,
    metadataUrl: e.SHOAL_METADATA_URL,
    storeTimeoutMs: e.SHOAL_STORE_TIMEOUT_MS,
    tls:
      e.SHOAL_TLS_CERT && e.SHOAL_TLS_KEY
        ? { certFile: path.resolve(e.SHOAL_TLS_CERT), keyFile: path.resolve(e.SHOAL_TLS_KEY) }
        : undefined,
    rateLimit: e.SHOAL_RATE_LIMIT,
    rateLimitWindowSeconds: e.SHOAL_RATE_LIMIT_WINDOW_SECONDS,
    usageFlushIntervalMs: e.SHOAL_USAGE_FLUSH_INTERVAL_MS,
    nodeId: e.SHOAL_NODE_ID,
    nodeUrl: e.SHOAL_NODE_URL,
    trustedProxies: Object.freeze(e.SHOAL_TRUSTED_PROXIES ?? []),
    metricsToken: e.SHOAL_METRICS_TOKEN,
    metricsPerDatabase: e.SHOAL_METRICS_PER_DATABASE ?? false,
    backup: backup.settings,
    workers: e.SHOAL_WORKERS,
    statementTimeoutMs: e.SHOAL_STATEMENT_TIMEOUT_MS,
    maxResponseBytes: e.SHOAL_MAX_RESPONSE_BYTES,
    maxTotalResponseBytes: e.SHOAL_MAX_TOTAL_RESPONSE_BYTES,
    sqliteHeapLimitMb: e.SHOAL_SQLITE_HEAP_LIMIT_MB,
    maxStreamsPerDatabase: e.SHOAL_MAX_STREAMS_PER_DATABASE,
    maxStreamsPerWebSocket: e.SHOAL_MAX_STREAMS_PER_WEBSOCKET,
    headersTimeoutMs: e.SHOAL_HEADERS_TIMEOUT_MS,
    bodyTimeoutMs: e.SHOAL_BODY_TIMEOUT_MS,
    nodeLocations: e.SHOAL_NODE_LOCATIONS && Object.freeze(e.SHOAL_NODE_LOCATIONS),
    primaryLeaseMs: e.SHOAL_PRIMARY_LEASE_MS,
    failoverAfterMs: e.SHOAL_FAILOVER_AFTER_MS,
    standbyConfirmMs: e.SHOAL_STANDBY_CONFIRM_MS,
    replicaPullTimeoutMs: e.SHOAL_REPLICA_PULL_TIMEOUT_MS,
    diskReserveMb: e.SHOAL_DISK_RESERVE_MB,
    deletedRetentionHours: e.SHOAL_DELETED_RETENTION_HOURS,
    jwksPrivateAddresses: e.SHOAL_JWKS_PRIVATE_ADDRESSES,
    ...(e.SHOAL_FAILPOINTS?.length ? { failpoints: Object.freeze(e.SHOAL_FAILPOINTS) } : {}),
  });
}
