import { defineConfig } from "vitest/config";

const shared = {
  // Each file boots its own servers on random ports and temp folders, so files can run in parallel;
  // the native libsql addon is only safe in forked processes, not worker threads.
  pool: "forks" as const,
  testTimeout: 30_000,
  // In-process Shoals don't go through main.ts, which sizes libsql's thread pool: give the test
  // processes the pool a node with the default catalogue gets (2 statement threads + 6 locations).
  env: { TOKIO_WORKER_THREADS: "8" },
  hookTimeout: 60_000,
};

/**
 * Two projects: everything on the embedded SQLite store, and the control-plane suites again with
 * the store on a real PostgreSQL server that the run starts itself (SHOAL_TEST_STORE tells
 * test/helpers/shoal.ts which store to give each Shoal it boots).
 */
export default defineConfig({
  test: {
    projects: [
      { test: { ...shared, name: "sqlite", include: ["test/**/*.test.ts"] } },
      {
        test: {
          ...shared,
          name: "postgres",
          include: ["test/api/**/*.test.ts", "test/service/**/*.test.ts"],
          // These start Shoal processes on the embedded store whatever the project, or none at all:
          // once is enough (and `npm start`'s test may build dist/, which two projects shouldn't race on).
          exclude: ["test/service/start-stop.test.ts", "test/service/permissions.test.ts"],
          env: { ...shared.env, SHOAL_TEST_STORE: "postgres" },
          globalSetup: ["test/global-setup-postgres.ts"],
        },
      },
    ],
  },
});
