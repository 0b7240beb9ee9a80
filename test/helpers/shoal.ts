import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { inject } from "vitest";
import { type Config, DEFAULT_LOCATIONS } from "../../src/config.js";
import { createLogger } from "../../src/lib/logger.js";
import { type Shoal, startShoal } from "../../src/main.js";

export const ADMIN_TOKEN = "test-admin-token-0123456789abcdef";

export interface TestShoal {
  url: string;
  /** Base URL for `@tursodatabase/api`: it must end in `/v1/`. */
  apiBase: string;
  dataDir: string;
  /** The PostgreSQL store's URL when the test runs on PostgreSQL. */
  metadataUrl: string | undefined;
  adminToken: string;
  shoal: Shoal;
  /**
   * Stops the service and starts it again on the same data folder and port; `whileStopped` runs
   * in between (a test changing files as only a stopped node may).
   */
  restart(whileStopped?: () => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

export function testConfig(dataDir: string, overrides: Partial<Config> = {}): Config {
  return {
    host: "127.0.0.1",
    port: 0,
    dataDir,
    adminUser: "admin",
    adminEmail: "admin@localhost",
    adminToken: ADMIN_TOKEN,
    locations: DEFAULT_LOCATIONS,
    dbDomain: "shoal.test",
    logLevel: "silent",
    version: "0.0.0-test",
    maxConnections: 64,
    durability: "relaxed",
    transactionTimeoutMs: 5000,
    streamIdleTimeoutMs: 10_000,
    encryptionKeyIdleSeconds: 60,
    historyRetentionHours: 24,
    deletedRetentionHours: 120,
    metadataUrl: undefined,
    storeTimeoutMs: 15_000,
    rateLimit: 0,
    rateLimitWindowSeconds: 60,
    usageFlushIntervalMs: 1000,
    nodeId: undefined,
    nodeUrl: undefined,
    trustedProxies: [],
    backup: undefined,
    workers: 2,
    statementTimeoutMs: 5000,
    maxResponseBytes: 10 * 1024 * 1024,
    maxTotalResponseBytes: 64 * 1024 * 1024,
    sqliteHeapLimitMb: 256,
    maxStreamsPerDatabase: 256,
    maxStreamsPerWebSocket: 128,
    headersTimeoutMs: 10_000,
    bodyTimeoutMs: 30_000,
    nodeLocations: undefined,
    primaryLeaseMs: 10_000,
    failoverAfterMs: 0,
    standbyConfirmMs: 1000,
    replicaPullTimeoutMs: 5000,
    diskReserveMb: 64,
    // The suite's identity providers serve their key sets on 127.0.0.1.
    jwksPrivateAddresses: "allow",
    ...overrides,
  };
}

/** The store a test Shoal gets: the embedded one, or a fresh database on the run's PostgreSQL server. */
export const TEST_STORE = process.env.SHOAL_TEST_STORE === "postgres" ? "postgres" : "sqlite";

let databases = 0;

/** A new, empty database on the run's PostgreSQL server (started by test/global-setup-postgres.ts). */
export async function newPostgresDatabase(): Promise<string> {
  const base = inject("pgBaseUrl");
  const name = `shoal_${process.pid}_${++databases}`;
  const admin = new pg.Client({ connectionString: `${base}/postgres` });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  return `${base}/${name}`;
}

/**
 * Boots a real Shoal on a random port with a fresh data folder in the system temp directory.
 * `start.consoleDir` serves a console built by the test (test/helpers/console.ts).
 */
export async function startTestShoal(
  overrides: Partial<Config> = {},
  start: { consoleDir?: string; logTo?: NodeJS.WritableStream } = {},
): Promise<TestShoal> {
  const dataDir = overrides.dataDir ?? (await mkdtemp(path.join(tmpdir(), "shoal-test-")));
  const metadataUrl =
    overrides.metadataUrl ?? (TEST_STORE === "postgres" ? await newPostgresDatabase() : undefined);
  const config = testConfig(dataDir, { ...overrides, metadataUrl });
  const log = createLogger(config.logLevel, start.logTo);
  const opts = { log, announce: () => {}, consoleDir: start.consoleDir };
  let shoal = await startShoal(config, opts);
  await shoal.reconciled;
  const h: TestShoal = {
    url: shoal.url,
    apiBase: `${shoal.url}/v1/`,
    dataDir,
    metadataUrl,
    adminToken: config.adminToken ?? "",
    shoal,
    async restart(whileStopped) {
      const port = shoal.port;
      await shoal.close();
      await whileStopped?.();
      shoal = await startShoal({ ...config, port }, opts);
      await shoal.reconciled;
      h.shoal = shoal;
      h.url = shoal.url;
      h.apiBase = `${shoal.url}/v1/`;
    },
    async close() {
      await shoal.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return h;
}
