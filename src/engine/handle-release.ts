import v8 from "node:v8";
import vm from "node:vm";

/**
 * A closed `libsql` connection keeps its file descriptors and memory until V8 collects the JS
 * objects of its prepared statements (they hold the native connection alive). A pool that closes
 * idle handles would otherwise pile up descriptors between collections, so after closing handles
 * it asks for a collection. `gc` is exposed at run time rather than with a command-line flag, so
 * every way of starting Shoal (npm start, tsx, tests) gets it.
 */
let gc: ((opts?: { type: "major" | "minor" }) => void) | undefined;
try {
  v8.setFlagsFromString("--expose_gc");
  gc = vm.runInNewContext("gc") as typeof gc;
} catch {
  gc = undefined;
}

let pending = 0;
let scheduled: NodeJS.Timeout | undefined;

/** Notes that `count` handles were closed; a collection follows shortly, at most once per interval. */
export function handlesClosed(count: number, intervalMs = 250): void {
  if (!gc || count <= 0) return;
  pending += count;
  if (scheduled) return;
  scheduled = setTimeout(() => {
    scheduled = undefined;
    if (pending === 0) return;
    pending = 0;
    gc?.({ type: "major" });
  }, intervalMs);
  scheduled.unref();
}
