import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Each file boots its own servers on random ports and temp folders, so files can run in parallel;
    // the native libsql addon is only safe in forked processes, not worker threads.
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
