// The entry of a shard process, started by its node's primary process (shard-process.ts) with an
// IPC pipe; it is never run by hand. Like main.ts it is a composition root: the only settings it
// reads come through the pipe, and it sets the one the native driver reads from the environment.
import { Channel, type Endpoint } from "./channel.js";
import type { PrimaryMethods, ShardInit, ShardMethods } from "./protocol.js";
import type { Shard } from "./shard.js";

// Files and folders a shard makes (databases, WAL, frame logs) are the node's alone, as main.ts does.
process.umask(0o077);
const methods = {} as ShardMethods;
const channel = new Channel<ShardMethods, PrimaryMethods>(process as unknown as Endpoint, methods);
let shard: Shard | undefined;
let stopping = false;

const stop = (code: number) => {
  if (stopping) return;
  stopping = true;
  void (async () => {
    try {
      await shard?.stop();
    } finally {
      process.exit(code);
    }
  })();
};

// Without its primary process the node is down (it crashed, or was killed): this shard ends at
// once too, as a thread of one process would. Its databases are as safe as after any crash (WAL).
process.on("disconnect", () => {
  if (!stopping) process.exit(1);
});
// The primary process stops its shards itself; a signal sent to the whole process group must not
// make one end before the primary asks (it may still need its last usage counts and backups).
process.on("SIGINT", () => {});
process.on("SIGTERM", () => {});

channel.on("init", (data) => {
  const init = data as ShardInit;
  // The driver sizes its thread pool (statements that may run long) from this, once, on first use.
  process.env.TOKIO_WORKER_THREADS = String(init.statementThreads);
  void import("./shard.js")
    .then(({ startShard }) => startShard(init, channel))
    .then((s) => {
      shard = s;
      Object.assign(methods, s.methods);
      channel.emit("ready", null);
    })
    .catch((e: unknown) => {
      process.stderr.write(
        `shoal shard ${init.index}: failed to start: ${e instanceof Error ? e.stack : e}\n`,
      );
      process.exit(1);
    });
});
channel.on("stop", () => stop(0));
