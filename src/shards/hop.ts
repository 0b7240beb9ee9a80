import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { ClientAddress } from "../dataplane/client-address.js";
import type { ForwardingMarks } from "../dataplane/forward/headers.js";
import { proxyHttp } from "../dataplane/forward/http-proxy.js";
import type { ClientProof } from "../dataplane/forward/proof.js";
import { WebSocketProxy } from "../dataplane/forward/ws-proxy.js";
import { REQUEST_ID_HEADER, requestIdOf } from "../lib/request-id.js";

/**
 * Sends a request on to another process of this node, on that process's internal loopback port:
 * a request that arrived on a kept-alive connection served by a process that doesn't serve it
 * (a client sharing one connection between databases, or between SQL and the management API).
 * It is the node-to-node forwarding (dataplane/forward/) without its marks of a second node: the
 * request was never forwarded as far as the node is concerned, and no `X-Shoal-Served-By` is
 * added. The client's address travels signed, as between nodes, so allowlists still see it.
 */
export class Hop {
  private readonly sockets = new WebSocketProxy();

  constructor(
    private readonly nodeId: string,
    private readonly proof: ClientProof,
    private readonly clientAddress: ClientAddress,
  ) {}

  http(req: IncomingMessage, res: ServerResponse, port: number): void {
    proxyHttp(req, res, this.to(port), this.marks(req));
  }

  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, port: number): void {
    this.sockets.upgrade(req, socket, head, this.to(port), this.marks(req));
  }

  closeAll(): void {
    this.sockets.closeAll();
  }

  private to(port: number) {
    return { holder: { id: this.nodeId, url: `http://127.0.0.1:${port}` }, database: "the database" };
  }

  private marks(req: IncomingMessage): ForwardingMarks {
    const peer = this.clientAddress(req);
    return {
      peer: undefined,
      proof: this.proof.sign(peer, this.nodeId),
      requestId: requestIdOf(req.headers[REQUEST_ID_HEADER]),
    };
  }
}
