/**
 * Work that holds the event loop on purpose until it is done (a database file copied with
 * `VACUUM INTO`). A process whose event loop is watched for a stuck statement (a shard, see
 * src/shards/supervisor.ts) is told when such work starts and ends, so the watchdog doesn't take
 * a long copy for a stuck driver. Process-wide, as the event loop is.
 */
let watcher: ((holding: boolean) => void) | undefined;

/** Tells `fn` when blocking work starts (true) and ends (false); one watcher per process. */
export function watchBlockingWork(fn: (holding: boolean) => void): void {
  watcher = fn;
}

/** Runs `fn`, which may hold the event loop for long, with the process's watcher told around it. */
export function blockingWork<T>(fn: () => T): T {
  watcher?.(true);
  try {
    return fn();
  } finally {
    watcher?.(false);
  }
}
