import type { Command } from "commander";
import { listAll } from "../api-client.js";
import type { Io } from "../io.js";
import { emit, renderTable } from "../output.js";
import { type CopyStore, registerAdminStore } from "./admin-store.js";
import { registerBackup } from "./backup.js";
import { confirm, remote } from "./context.js";

interface User {
  username: string;
  email: string;
  admin: boolean;
  created_at: string;
}
interface Node {
  id: string;
  url: string;
  version: string;
  live: boolean;
  heartbeat_at: string;
  locations: string[];
}

export interface NodeStatus {
  node: string;
  shards: Array<{ index: number; serving: boolean }>;
  quarantined: number;
  replication: Array<{ location: string; replicas: number; behind_ms: number }>;
  primaries: Array<{ group_id: string; standbys: string[]; joining: string[]; isolated: boolean }>;
}

const adminOnly = { 403: "only the instance administrator may do this" };

export function registerAdmin(program: Command, io: Io, copyStore?: CopyStore): void {
  const admin = program
    .command("admin")
    .description("Instance administration (the administrator's token only)");
  const users = admin.command("users").description("The users of this Shoal");
  registerBackup(admin, io);
  registerAdminStore(admin, io, copyStore);

  users
    .command("list")
    .description("List every user")
    .action(
      remote(io, async (s, _args, opts) => {
        const list = await listAll<User>(s.api, "/v1/admin/users", "users", {}, adminOnly);
        await emit(io.stdout, opts.json, list, () =>
          renderTable(
            ["username", "email", "admin", "created"],
            list.map((u) => [u.username, u.email, u.admin ? "yes" : "no", u.created_at]),
          ),
        );
      }),
    );

  users
    .command("create")
    .description("Create a user with a personal organization and a first API token (shown once)")
    .argument("<username>")
    .requiredOption("--email <email>", "the user's email address")
    .action(
      remote(io, async (s, [username], opts) => {
        const r = await s.api.call<{ user: User; token: string }>("POST", "/v1/admin/users", {
          body: { username, email: opts.email },
          hints: adminOnly,
        });
        await emit(
          io.stdout,
          opts.json,
          r,
          () =>
            `Created user ${r.user.username}. Their API token, shown once:\n\n  ${r.token}\n\n` +
            `They log in with: shoal login ${s.api.baseUrl} --token <that token>\n`,
        );
      }),
    );

  users
    .command("delete")
    .description("Delete a user (and their personal organization)")
    .argument("<username>")
    .option("-y, --yes", "don't ask for confirmation")
    .action(
      remote(io, async (s, [username], opts) => {
        await confirm(io, opts, `Delete user ${username}?`);
        const r = await s.api.call("DELETE", `/v1/admin/users/${encodeURIComponent(String(username))}`, {
          hints: { ...adminOnly, 404: "see the users with `shoal admin users list`" },
        });
        await emit(io.stdout, opts.json, r, () => `Deleted user ${username}.\n`);
      }),
    );

  registerNodes(admin, io);
}

function registerNodes(admin: Command, io: Io): void {
  admin
    .command("nodes")
    .description("List the Shoal processes sharing this instance's store, and the locations each holds")
    .action(
      remote(io, async (s, _args, opts) => {
        const r = await s.api.call<{ nodes: Node[] }>("GET", "/v1/admin/nodes", { hints: adminOnly });
        await emit(io.stdout, opts.json, r.nodes, () =>
          renderTable(
            ["id", "url", "version", "live", "heartbeat", "locations"],
            r.nodes.map((n) => [
              n.id,
              n.url,
              n.version,
              n.live ? "yes" : "no",
              n.heartbeat_at,
              n.locations.join(", "),
            ]),
          ),
        );
      }),
    );

  admin
    .command("node")
    .description(
      "The status of the node you are logged in to: its shard processes and how far its replicas trail",
    )
    .action(
      remote(io, async (s, _args, opts) => {
        const r = await s.api.call<NodeStatus>("GET", "/v1/admin/node", { hints: adminOnly });
        await emit(io.stdout, opts.json, r, () => {
          const serving = r.shards.filter((sh) => sh.serving).length;
          const head =
            `Node ${r.node}: ${serving} of ${r.shards.length} shard processes serving` +
            (r.quarantined > 0 ? `, ${r.quarantined} databases quarantined` : "") +
            ".\n";
          const replicas =
            r.replication.length === 0
              ? "No replicas on this node.\n"
              : renderTable(
                  ["location", "replicas", "behind"],
                  r.replication.map((l) => [
                    l.location,
                    String(l.replicas),
                    l.behind_ms === 0 ? "caught up" : `${l.behind_ms} ms`,
                  ]),
                );
          return `${head}\n${replicas}${primariesTable(r.primaries)}`;
        });
      }),
    );
}

/** The standbys of the primaries a node holds; nothing when it holds none with standbys kept. */
export function primariesTable(primaries: NodeStatus["primaries"]): string {
  if (primaries.length === 0) return "";
  return `\n${renderTable(
    ["group", "standbys", "joining", "state"],
    primaries.map((p) => [
      p.group_id,
      p.standbys.join(", ") || "none (no automatic failover)",
      p.joining.join(", ") || "-",
      p.isolated ? "isolated" : "serving",
    ]),
  )}`;
}
