import { useState } from "preact/hooks";
import { api, orgPath } from "../api.js";
import { useOrg } from "../context.js";
import { when } from "../format.js";
import { useAction, useLoad } from "../hooks.js";
import { Busy, Button, ErrorNote, Notice, Section, Table } from "../ui/kit.js";

interface DeletedDatabase {
  Name: string;
  DbId: string;
  group: string;
  deleted_at: string;
  group_deleted_at: string | null;
}

/**
 * Deleted databases that can still be restored (Turso's "Recently deleted"), newest first, each
 * with a restore button for owners and admins. One deleted with its group comes back with the group.
 */
export function RecentlyDeleted() {
  const { org, canManage } = useOrg();
  const [restored, setRestored] = useState<string>();
  const restore = useAction();
  const list = useLoad(async () => {
    const id = (await api.get<{ organization: { id: string } }>(orgPath(org.slug))).organization.id;
    const r = await api.get<{ databases: DeletedDatabase[] }>(
      `/v3/organizations/${id}/databases?deleted=true&limit=100`,
    );
    return { id, databases: r.databases };
  }, [org.slug]);
  const back = async (d: DeletedDatabase) => {
    setRestored(undefined);
    const id = list.data?.id;
    if (!id) return;
    const r = await restore.run(() =>
      api.post<{ database: { Name: string } }>(`/v3/organizations/${id}/databases/${d.DbId}/restore`),
    );
    if (r) {
      setRestored(`Database ${r.database.Name} is back. Clients need new tokens for it.`);
      list.reload();
    }
  };
  const databases = list.data?.databases ?? [];
  return (
    <Section title="Recently deleted">
      <p class="hint">
        Deleted databases stay restorable for a while, exactly as they were. Restoring one needs an owner or
        an admin.
      </p>
      {list.loading && <Busy label="Loading deleted databases…" />}
      <ErrorNote message={list.error} />
      {list.data && databases.length === 0 && <p>No deleted database can be restored.</p>}
      {databases.length > 0 && (
        <Table label="Recently deleted databases" head={["Name", "Group", "Deleted", ""]}>
          {databases.map((d) => (
            <tr key={d.DbId}>
              <td>{d.Name}</td>
              <td>
                {d.group}
                {d.group_deleted_at && " (deleted with its group)"}
              </td>
              <td>{when(d.deleted_at)}</td>
              <td>
                {canManage && !d.group_deleted_at && (
                  <Button busy={restore.busy} onClick={() => void back(d)} aria-label={`Restore ${d.Name}`}>
                    Restore
                  </Button>
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
      <ErrorNote message={restore.error} />
      <Notice message={restored} />
    </Section>
  );
}
