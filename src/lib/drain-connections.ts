import type { Server } from "node:http";
import type { Socket } from "node:net";

/**
 * Closes an HTTP server fed its connections by hand: requests in flight may finish until
 * `deadlineMs` from now, kept-alive connections are closed as soon as they are idle (else they
 * would hold the close for the keep-alive timeout), and whatever is left at the deadline is cut.
 */
export async function drainConnections(
  server: Server,
  sockets: ReadonlySet<Socket>,
  deadlineMs: number,
): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (sockets.size > 0 && Date.now() < deadline) {
    server.closeIdleConnections();
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  server.closeAllConnections();
  for (const s of sockets) s.destroy();
  // Also stops the server's checks of its connections (headers and request time-outs).
  server.close();
}
