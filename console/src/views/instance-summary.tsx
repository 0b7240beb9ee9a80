import { api } from "../api.js";
import { useMe } from "../context.js";
import { useLoad } from "../hooks.js";
import { href } from "../router.js";
import { ErrorNote, Section } from "../ui/kit.js";

interface NodeState {
  live: boolean;
}
interface NodeStatus {
  shards: Array<{ serving: boolean }>;
  quarantined: number;
  replication: Array<{ location: string; replicas: number; behind_ms: number }>;
}
interface BackupState {
  enabled: boolean;
  delay_ms: number;
  databases: Array<{ failures: number }>;
}

function seconds(ms: number): string {
  return ms < 1000 ? "under a second" : `${Math.round(ms / 1000)} s`;
}

/**
 * For the instance administrator, on the overview: whether every node is up and how far the
 * bucket's backups trail this node. The Instance page has the details.
 */
export function InstanceSummary() {
  const { user } = useMe();
  const state = useLoad(async () => {
    if (!user.admin) return undefined;
    const [nodes, backups, node] = await Promise.all([
      api.get<{ nodes: NodeState[] }>("/v1/admin/nodes"),
      api.get<BackupState>("/v1/admin/backups"),
      api.get<NodeStatus>("/v1/admin/node"),
    ]);
    return { nodes: nodes.nodes, backups, node };
  }, [user.admin]);
  if (!user.admin) return null;
  const s = state.data;
  const failing = s?.backups.databases.filter((d) => d.failures > 0).length ?? 0;
  return (
    <Section title="This Shoal">
      <ErrorNote message={state.error} />
      {s && (
        <ul class="plain-list">
          <li>
            Nodes: <strong>{s.nodes.filter((n) => n.live).length}</strong> of {s.nodes.length} live.
          </li>
          <ShardsLine node={s.node} />
          <li>
            Replicas:{" "}
            {s.node.replication.length === 0
              ? "none on this node (a group with more than one location keeps them)."
              : s.node.replication.map((r, i) => (
                  <span key={r.location}>
                    {i > 0 && "; "}
                    {r.location}: {r.replicas},{" "}
                    {r.behind_ms === 0 ? "caught up" : `${seconds(r.behind_ms)} behind`}
                  </span>
                ))}
          </li>
          <li>
            Backups:{" "}
            {s.backups.enabled ? (
              <>
                the bucket trails this node by <strong>{seconds(s.backups.delay_ms)}</strong>
                {failing > 0 ? `; ${failing} database${failing === 1 ? "" : "s"} failing to ship` : ""}.
              </>
            ) : (
              "off (set SHOAL_BACKUP_URL to ship databases to a bucket)."
            )}
          </li>
        </ul>
      )}
      <p>
        <a href={href("admin")}>Nodes, users and more on the Instance page</a>
      </p>
    </Section>
  );
}

function ShardsLine({ node }: { node: NodeStatus }) {
  const serving = node.shards.filter((sh) => sh.serving).length;
  return (
    <li>
      Shard processes on this node: <strong>{serving}</strong> of {node.shards.length} serving
      {node.quarantined > 0
        ? `; ${node.quarantined} database${node.quarantined === 1 ? "" : "s"} refused for crashing theirs`
        : ""}
      .
    </li>
  );
}
