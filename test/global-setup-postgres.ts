import type { TestProject } from "vitest/node";
import { startPostgres } from "./helpers/postgres.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** `postgres://user@host:port` of the run's PostgreSQL server, without a database. */
    pgBaseUrl: string;
  }
}

/**
 * Starts one real PostgreSQL server for the whole `postgres` project; every Shoal a test boots
 * gets its own database on it (test/helpers/shoal.ts), so test files still share nothing.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startPostgres();
  project.provide("pgBaseUrl", server.url.replace(/\/postgres$/, ""));
  return () => server.stop();
}
