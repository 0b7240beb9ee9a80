import type { NodeAddress } from "../../domain/cluster/holders.js";
import type { ShoalCode } from "../hrana/error-codes.js";
import { errorBody } from "../http-io.js";

/** A refusal of the forwarding itself, in the data plane's error shape. */
export interface Refusal {
  status: number;
  code: ShoalCode;
  message: string;
}

/**
 * Every answer the forwarding gives of its own (the holder's answers pass through unchanged).
 * The texts are the contract: clients and tests match on them.
 */
export const forwardRefusals = {
  unreachable: (database: string, holder: NodeAddress, why: string): Refusal => ({
    status: 503,
    code: "DATABASE_NODE_UNREACHABLE",
    message:
      `database ${database} is served by node ${holder.id} (${holder.url}), which can't be reached ` +
      `from this node (${why}): nothing was sent to it, so nothing changed; retry once it is back`,
  }),
  failed: (database: string, holder: NodeAddress, why: string): Refusal => ({
    status: 502,
    code: "DATABASE_NODE_FAILED",
    message:
      `node ${holder.id} (${holder.url}), which serves database ${database}, failed before answering ` +
      `(${why}): the request may or may not have taken effect there; look before retrying a write`,
  }),
  unheld: (database: string, location: string): Refusal => ({
    status: 503,
    code: "LOCATION_UNHELD",
    message: `no node holds location ${location}, where database ${database} lives: start a node whose SHOAL_LOCATIONS includes it`,
  }),
  secondHop: (database: string, holder: NodeAddress, from: string): Refusal => ({
    status: 421,
    code: "DATABASE_ELSEWHERE",
    message:
      `database ${database} is served by node ${holder.id} (${holder.url}); node ${from} sent this ` +
      "request here already and it is not forwarded twice (the nodes disagreed about where the " +
      "database lives, as for a moment after a location moves): retry",
  }),
};

/** The wire body, the data plane's error shape (see `errorBody`). */
export function refusalBody(r: Refusal): string {
  return errorBody(r.code, r.message);
}
