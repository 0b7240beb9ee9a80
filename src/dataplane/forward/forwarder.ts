import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { Placement } from "../../domain/core/ports.js";
import { REQUEST_ID_HEADER, requestIdOf } from "../../lib/request-id.js";
import type { ClientAddress } from "../client-address.js";
import type { ForwardingMarks } from "./headers.js";
import { proxyHttp, refuse } from "./http-proxy.js";
import { forwardRefusals } from "./messages.js";
import type { NodeChoice } from "./node-choice.js";
import type { ClientProof } from "./proof.js";
import { refuseUpgrade, WebSocketProxy } from "./ws-proxy.js";

/** A request's node when it isn't this one: another node's address, or a refusal. */
export type Elsewhere = Exclude<NodeChoice, { here: true }>;

/** What forwarding needs: this node's id and the node-to-node proof of the client's address. */
export interface ForwardingParts {
  placement: Pick<Placement, "nodeId">;
  clientProof: ClientProof;
}

/**
 * Sends a request for a database another node serves to that node (HTTP streamed both ways,
 * WebSocket piped message by message), so any node answers any database; or answers the refusal
 * the choice of node gave (`node-choice.ts`). The holder decides access with the client's own
 * token as always: forwarding only routes.
 */
export class Forwarder {
  private readonly sockets = new WebSocketProxy();

  constructor(
    private readonly parts: ForwardingParts,
    private readonly clientAddress: ClientAddress,
  ) {}

  send(req: IncomingMessage, res: ServerResponse, to: Elsewhere): void {
    const marks = this.marks(req);
    if ("refusal" in to) {
      refuse(res, to.refusal, marks.requestId);
      return;
    }
    try {
      proxyHttp(req, res, to, marks);
    } catch (e) {
      // A holder address the URL parser refuses, say: nothing was sent.
      refuse(res, forwardRefusals.unreachable(to.database, to.holder, String(e)), marks.requestId);
    }
  }

  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, to: Elsewhere): void {
    const marks = this.marks(req);
    if ("refusal" in to) {
      refuseUpgrade(socket, to.refusal, marks.requestId);
      return;
    }
    try {
      this.sockets.upgrade(req, socket, head, to, marks);
    } catch (e) {
      refuseUpgrade(socket, forwardRefusals.unreachable(to.database, to.holder, String(e)), marks.requestId);
    }
  }

  closeAll(): void {
    this.sockets.closeAll();
  }

  private marks(req: IncomingMessage): ForwardingMarks {
    const peer = this.clientAddress(req);
    const self = this.parts.placement.nodeId;
    const requestId = requestIdOf(req.headers[REQUEST_ID_HEADER]);
    return { self, peer, requestId, proof: this.parts.clientProof.sign(peer, self) };
  }
}
