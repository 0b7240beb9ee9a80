import { ConflictError, MisdirectedError, NotFoundError, UnavailableError } from "../../errors.js";

/**
 * Every error message the cluster area answers with. The texts are the API's contract (Turso's wording
 * where Turso has one; clients and tests match on them): change one only on purpose.
 */
export const clusterErrors = {
  filesElsewhere: (locations: readonly string[], holder: { id: string; url: string }, self: string) =>
    new MisdirectedError(
      `the database files of location ${locations.join(", ")} are kept by node ${holder.id} (${holder.url}), ` +
        `not by this node (${self}): send this request to ${holder.url}`,
      "misdirected",
      { id: holder.id, url: holder.url },
    ),
  notReady: (reasons: string) => new UnavailableError(`not ready: ${reasons}`, "not_ready"),
  locationUnheld: (location: string) =>
    new MisdirectedError(
      `no node holds location ${location} yet: start a node whose SHOAL_LOCATIONS includes it`,
    ),
  spansNodes: (holders: string) =>
    new ConflictError(
      `this call involves database files kept by several nodes (${holders}), which no single node can act on: act on the groups of each node's locations separately`,
      "spans_nodes",
    ),
  nodeNotFound: (id: string) => new NotFoundError(`node ${id} not found`),
  nodeLive: (id: string) => new ConflictError(`node ${id} is live; stop it first`),
};
