import { api } from "../api.js";
import { useMe } from "../context.js";
import { useLoad } from "../hooks.js";
import { href } from "../router.js";
import { ErrorNote, Section } from "../ui/kit.js";

interface NodeState {
  live: boolean;
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
    const [nodes, backups] = await Promise.all([
      api.get<{ nodes: NodeState[] }>("/v1/admin/nodes"),
      api.get<BackupState>("/v1/admin/backups"),
    ]);
    return { nodes: nodes.nodes, backups };
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
