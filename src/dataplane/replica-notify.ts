import type { IncomingMessage, ServerResponse } from "node:http";
import type { ReplicaPort } from "../domain/core/ports.js";
import type { DataAccessPorts } from "../domain/data-access/ports.js";
import type { ShoalCode } from "./hrana/error-codes.js";
import { errorBody } from "./http-io.js";

/** What the data plane needs of the other nodes (`hosting/node-peers.ts`). */
export interface DataPlanePeers {
  /** This node's id, named on the requests it sends to another node's primary. */
  readonly nodeId: string;
  /** The calling node's id for a valid node-to-node token; undefined otherwise. */
  verify(token: string | undefined): Promise<string | undefined>;
  /** Base URL of the node holding `location`; undefined when it is this node (or none). */
  urlOf(location: string): Promise<string | undefined>;
}

function answer(res: ServerResponse, status: number, refusal?: { code: ShoalCode; error: string }): void {
  if (refusal === undefined) {
    res.writeHead(status);
    res.end();
    return;
  }
  const bytes = Buffer.from(errorBody(refusal.code, refusal.error));
  res.writeHead(status, { "content-type": "application/json", "content-length": bytes.length });
  res.end(bytes);
}

async function bodyOf(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = "";
  for await (const chunk of req) {
    text += chunk;
    if (text.length > 4096) break;
  }
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === "object" && v !== null ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * `POST /replication/{db}/notify` `{"location": "..."}`, from the node holding a database's
 * primary to the node keeping one of its replicas: the primary committed, pull now (or build the
 * replica, for a database made after this node's location joined the group). Only other nodes
 * call it, with a node-to-node token; it answers at once, the pull runs after.
 */
export async function notifyReplica(
  req: IncomingMessage,
  res: ServerResponse,
  dbId: string,
  deps: Pick<DataAccessPorts, "directory" | "placement"> & { replicas: ReplicaPort; peers?: DataPlanePeers },
): Promise<void> {
  const m = /^bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "");
  if (!deps.peers || !(await deps.peers.verify(m?.[1]))) {
    return answer(res, 401, {
      error: "only another node of this deployment may call this",
      code: "NODE_ONLY",
    });
  }
  const { location } = await bodyOf(req);
  if (typeof location !== "string")
    return answer(res, 400, { error: "location is required", code: "BAD_REQUEST" });
  if (!deps.placement.holds(location)) {
    return answer(res, 421, { error: `location ${location} is not held by this node`, code: "MISDIRECTED" });
  }
  const db = await deps.directory.find({ id: dbId });
  // The database, or its group's location here, is gone: so is the replica.
  if (!db?.locations.includes(location)) await deps.replicas.drop(dbId, location);
  else deps.replicas.catchUp(dbId, location);
  answer(res, 204);
}
