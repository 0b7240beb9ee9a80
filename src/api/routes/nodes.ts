import { z } from "@hono/zod-openapi";
import { nodeStatus } from "../../domain/cluster/node-status.js";
import { forgetNode, listNodes, type NodeInfo } from "../../domain/cluster/nodes.js";
import { pathParam } from "../params.js";
import { type Route, route } from "../route.js";

const tags = ["Instance administration"];
const NodeWire = z
  .object({
    id: z.string().openapi({ description: "The node's `SHOAL_NODE_ID`.", example: "node-3f9a01c2" }),
    url: z.string().openapi({
      description: "How other nodes reach it (`SHOAL_NODE_URL`).",
      example: "http://10.0.0.5:8080",
    }),
    version: z.string().openapi({ example: "0.1.0" }),
    started_at: z.string().openapi({ example: "2026-05-01T09:30:00.000Z" }),
    heartbeat_at: z
      .string()
      .openapi({ description: "Its last heartbeat.", example: "2026-05-01T10:02:15.000Z" }),
    stopped_at: z.string().nullable().openapi({ description: "Set when it last stopped cleanly." }),
    live: z.boolean().openapi({ description: "Running: a heartbeat within the last 15 seconds." }),
    locations: z.array(z.string()).openapi({
      description: "Locations whose database files this node serves.",
      example: ["aws-us-east-1"],
    }),
  })
  .openapi("Node");
const nodeWire = (n: NodeInfo) => ({
  id: n.id,
  url: n.url,
  version: n.version,
  started_at: n.startedAt,
  heartbeat_at: n.heartbeatAt,
  stopped_at: n.stoppedAt,
  live: n.live,
  locations: n.locations,
});
const forbidden = { 403: "Only the instance administrator manages nodes." };

export const nodeRoutes: Route[] = [
  route({
    method: "get",
    path: "/v1/admin/nodes",
    summary: "List nodes",
    description:
      "Instance administrators only (Turso has no equivalent). Every Shoal process that has started on this store, whether it is live, and the locations it holds: data-plane traffic for a database must reach the node holding its location.",
    tags,
    response: z.object({ nodes: z.array(NodeWire) }),
    errors: forbidden,
    handler: async ({ ctx }) => ({ nodes: (await listNodes(ctx)).map(nodeWire) }),
  }),
  route({
    method: "get",
    path: "/v1/admin/node",
    summary: "Status of this node",
    description:
      "Instance administrators only. The node that answers: its shard processes (serving, or starting again after one ended), the databases refused for crashing theirs, per location of the replicas it keeps how many there are and the age of the oldest commit one of them lacks (0: all caught up), and the standbys of the primaries it holds.",
    tags,
    response: z.object({
      node: z.string(),
      shards: z.array(z.object({ index: z.number(), serving: z.boolean() })),
      quarantined: z.number().openapi({ description: "Databases refused now (`DATABASE_QUARANTINED`)." }),
      replication: z.array(
        z.object({
          location: z.string(),
          replicas: z.number(),
          behind_ms: z.number().openapi({ description: "0 when every replica there has every commit." }),
        }),
      ),
      primaries: z
        .array(
          z.object({
            group_id: z.string(),
            standbys: z.array(z.string()).openapi({
              description:
                "Locations on other nodes holding every write this primary acknowledged: only these are promoted by an automatic failover.",
            }),
            joining: z.array(z.string()).openapi({ description: "Replicas being recorded as standbys." }),
            isolated: z.boolean().openapi({
              description:
                "Cut off from a standby and the store: the group's reads and writes here are refused (PRIMARY_ISOLATED).",
            }),
          }),
        )
        .openapi({
          description:
            "Groups whose primary this node holds, with their standbys (empty when SHOAL_STANDBY_CONFIRM_MS is 0).",
        }),
    }),
    errors: forbidden,
    handler: async ({ ctx }) => {
      const s = nodeStatus(ctx);
      return {
        node: s.node,
        shards: s.shards,
        quarantined: s.quarantined,
        replication: s.replication.map((r) => ({
          location: r.location,
          replicas: r.replicas,
          behind_ms: Math.round(r.behindMs),
        })),
        primaries: s.primaries.map((p) => ({
          group_id: p.groupId,
          standbys: p.standbys,
          joining: p.joining,
          isolated: p.isolated,
        })),
      };
    },
  }),
  route({
    method: "delete",
    path: "/v1/admin/nodes/{node}",
    summary: "Forget a node",
    description:
      "Removes a node that is gone for good; the locations it held go to the next node that starts. Its database files are not moved: copy them to that node first. A live node is refused.",
    tags,
    params: z.object({ node: pathParam("node", "Node id.", "node-3f9a01c2") }),
    response: z.object({ node: z.string() }),
    errors: { ...forbidden, 404: "node <id> not found", 409: "node <id> is live; stop it first" },
    handler: async ({ ctx, params }) => {
      await forgetNode(ctx, params.node);
      return { node: params.node };
    },
  }),
];
