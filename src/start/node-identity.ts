import { randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { NodeStartError } from "../domain/cluster/local-node.js";

/** Whether a Shoal answers at `url` (another process using this node id, or one that just died). */
export async function answersHealth(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) })).ok;
  } catch {
    return false;
  }
}

/**
 * The node id kept in the data folder, created on first start: stable across restarts, and
 * different for every data folder, so processes sharing a store never collide by default.
 */
export async function loadOrCreateNodeId(dataDir: string): Promise<string> {
  const file = path.join(dataDir, "node-id");
  try {
    const id = (await readFile(file, "utf8")).trim();
    if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(id))
      throw new NodeStartError(`${file} does not hold a valid node id`);
    return id;
  } catch (e) {
    if (e instanceof NodeStartError) throw e;
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  const id = `node-${randomBytes(4).toString("hex")}`;
  await writeFile(file, `${id}\n`, { mode: 0o600 });
  return id;
}
