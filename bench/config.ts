import { type Config, loadConfig } from "../src/config.js";

/** Settings of a Shoal a benchmark starts: the defaults, on a random port, logging nothing. */
export function benchConfig(dataDir: string, adminToken: string, overrides: Partial<Config> = {}): Config {
  const base = loadConfig(
    {
      SHOAL_DATA_DIR: dataDir,
      SHOAL_PORT: "0",
      SHOAL_ADMIN_TOKEN: adminToken,
      SHOAL_LOG_LEVEL: "silent",
      SHOAL_DB_DOMAIN: "localhost",
    },
    "bench",
  );
  return { ...base, ...overrides };
}
