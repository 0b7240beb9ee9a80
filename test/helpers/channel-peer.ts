// The other end of a Channel, in a process of its own (test/shards/channel.test.ts forks it).

import { HranaError } from "../../src/dataplane/hrana/errors.js";
import { NotFoundError } from "../../src/errors.js";
import { Channel, type Endpoint } from "../../src/shards/channel.js";

const channel: Channel<
  Record<string, (...args: never[]) => unknown>,
  { double(n: number): number }
> = new Channel(process as unknown as Endpoint, {
  echo: (v: unknown) => v,
  notFound: () => {
    throw new NotFoundError("no such thing", "THING_NOT_FOUND");
  },
  hrana: () => {
    throw new HranaError("STATEMENT_TIMEOUT", "too slow");
  },
  sqlite: () => {
    throw Object.assign(new Error("SQLite error: no such table: t"), { code: "SQLITE_ERROR", rawCode: 1 });
  },
  askBack: async (n: number) => (await channel.remote.double(n)) + 1,
  die: () => process.exit(3),
  hang: () => new Promise(() => {}),
  // A function can't cross the pipe: the answer itself can't be sent.
  unsendable: () => () => 1,
});
channel.on("ping", (data) => channel.emit("pong", data));
