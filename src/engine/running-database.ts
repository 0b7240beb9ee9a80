/**
 * Which database's statements this process runs now, for a process that must say afterwards which
 * database its last statements were on: the driver can abort the whole process on some values
 * (a Rust panic on TEXT that isn't UTF-8), with no chance to log anything, so the shard records
 * the database before each change of database (src/shards/running-marker.ts) and its supervisor
 * reads it after the crash. Process-wide, as a crash is.
 */
let watcher: ((path: string) => void) | undefined;
let last: string | undefined;

/** Tells `fn` each time statements start running on another database than the last; one watcher per process. */
export function watchRunningDatabase(fn: (path: string) => void): void {
  watcher = fn;
  last = undefined;
}

/** Notes that statements of the database at `path` are about to run. Cheap when it is the same as the last. */
export function noteRunning(path: string): void {
  if (path === last || !watcher) return;
  last = path;
  watcher(path);
}
