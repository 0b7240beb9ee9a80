import { randomBytes } from "node:crypto";
import { access, open, rm } from "node:fs/promises";
import path from "node:path";
import type { ReadinessProbe } from "../domain/cluster/readiness.js";
import type { Store } from "../store/store.js";

/**
 * The control-plane store answers a query on its tables. For the embedded store, its file must
 * also still be there: SQLite goes on answering from a deleted file, whose changes the next start
 * would never see.
 */
export function storeProbe(store: Store, file?: string): ReadinessProbe {
  return {
    name: "control-plane store",
    async check() {
      if (file) await access(file);
      await store.ping();
    },
  };
}

/** The data folder takes a new file: it exists, is writable and not full. */
export function dataFolderProbe(dir: string): ReadinessProbe {
  return {
    name: "data folder",
    async check() {
      const probe = path.join(dir, `.ready-${randomBytes(4).toString("hex")}`);
      const f = await open(probe, "wx", 0o600);
      try {
        await f.write("ok\n");
      } finally {
        await f.close();
        await rm(probe, { force: true });
      }
    },
  };
}
