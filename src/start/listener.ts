import type { Server } from "node:net";
import { StartError } from "../errors.js";

/**
 * Binds the HTTP port. Shoal does this before anything else at start, so a port that can't be had
 * stops it before the data folder, the store or the administrator is made.
 */
export async function listen(server: Server, host: string, port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const failed = (e: NodeJS.ErrnoException) => reject(bindError(e, host, port));
    server.once("error", failed);
    server.listen(port, host, () => {
      server.off("error", failed);
      // A failed accept (out of descriptors) is emitted here; the server goes on listening.
      server.on("error", () => {});
      resolve();
    });
  });
}

function bindError(e: NodeJS.ErrnoException, host: string, port: number): Error {
  const where = `${host.includes(":") ? `[${host}]` : host}:${port}`;
  switch (e.code) {
    case "EADDRINUSE":
      return new StartError(
        `${where} is already in use (another Shoal, or another program, listens there): stop it or set SHOAL_PORT to a free port`,
        1,
      );
    case "EACCES":
      return new StartError(
        `not allowed to listen on ${where} (ports below 1024 need privileges): set SHOAL_PORT to a port from 1024 up`,
      );
    case "EADDRNOTAVAIL":
    case "ENOTFOUND":
      return new StartError(`${host} is not an address of this machine: check SHOAL_HOST`);
    default:
      return e;
  }
}
