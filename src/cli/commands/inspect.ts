import type { Command } from "commander";
import { getDatabase, notFoundHint } from "../database.js";
import type { Io } from "../io.js";
import { emit, renderTable, sizeText } from "../output.js";
import { remote } from "./context.js";

interface Usage {
  rows_read: number;
  rows_written: number;
  storage_bytes: number;
  bytes_synced: number;
}

const count = (n: number) => n.toLocaleString("en");

export function registerInspect(program: Command, db: Command, io: Io): void {
  dbInspectCommand(db, io);
  const plan = program
    .command("plan")
    .description("The organization's plan: its quotas and what is used of them");
  planShowCommand(plan, io);
}

function dbInspectCommand(db: Command, io: Io): void {
  db.command("inspect")
    .description(
      "Show a database's size and this month's rows read and written (--queries: its costliest statements)",
    )
    .argument("<name>")
    .option("--queries", "the statements that read and wrote the most rows, with how often they ran")
    .action(
      remote(io, async (s, [name], opts) => {
        const d = await getDatabase(s, String(name));
        const base = await s.orgPath(`/databases/${encodeURIComponent(String(name))}`);
        const hints = notFoundHint(await s.org());
        if (opts.queries) {
          const r = await s.api.call<{ top_queries: Array<Record<string, number | string>> | null }>(
            "GET",
            `${base}/stats`,
            { hints },
          );
          const top = r.top_queries ?? [];
          await emit(io.stdout, opts.json, top, () =>
            top.length === 0
              ? "No statements have run yet.\n"
              : renderTable(
                  ["statement", "rows read", "rows written", "runs"],
                  top.map((q) => [
                    String(q.query),
                    count(Number(q.rows_read)),
                    count(Number(q.rows_written)),
                    count(Number(q.count)),
                  ]),
                ),
          );
          return;
        }
        const u = (await s.api.call<{ database: { usage: Usage } }>("GET", `${base}/usage`, { hints }))
          .database.usage;
        const inspected = { name: d.Name, locations: d.regions, ...u };
        await emit(io.stdout, opts.json, inspected, () =>
          renderTable(
            ["field", "value"],
            [
              ["size", sizeText(u.storage_bytes)],
              ["rows read this month", count(u.rows_read)],
              ["rows written this month", count(u.rows_written)],
              ["bytes synced this month", sizeText(u.bytes_synced)],
              ["locations", `${d.regions.length} (${d.regions.join(", ")})`],
            ],
          ),
        );
      }),
    );
}

interface Plan {
  name: string;
  quotas: Record<
    "rowsRead" | "rowsWritten" | "databases" | "locations" | "storage" | "groups" | "bytesSynced",
    number | null
  >;
}

function planShowCommand(plan: Command, io: Io): void {
  plan
    .command("show")
    .description("Show the plan, whether overages are on, and this month's use against each quota")
    .action(
      remote(io, async (s, _args, opts) => {
        const [sub, plans, usage] = await Promise.all([
          s.api.call<{ subscription: { plan: string; overages: boolean } }>(
            "GET",
            await s.orgPath("/subscription"),
          ),
          s.api.call<{ plans: Plan[] }>("GET", await s.orgPath("/plans")),
          s.api.call<{
            organization: { usage: Usage & { databases: number; locations: number; groups: number } };
          }>("GET", await s.orgPath("/usage")),
        ]);
        const { plan: name, overages } = sub.subscription;
        const quotas = plans.plans.find((p) => p.name === name)?.quotas;
        const used = usage.organization.usage;
        const lines: Array<[string, number, number | null | undefined, (n: number) => string]> = [
          ["rows read", used.rows_read, quotas?.rowsRead, count],
          ["rows written", used.rows_written, quotas?.rowsWritten, count],
          ["storage", used.storage_bytes, quotas?.storage, sizeText],
          ["bytes synced", used.bytes_synced, quotas?.bytesSynced, sizeText],
          ["databases", used.databases, quotas?.databases, count],
          ["locations", used.locations, quotas?.locations, count],
          ["groups", used.groups, quotas?.groups, count],
        ];
        const shown = { plan: name, overages, usage: used, quotas: quotas ?? null };
        await emit(
          io.stdout,
          opts.json,
          shown,
          () =>
            `Plan ${name}, overages ${overages ? "on" : "off"}.\n` +
            renderTable(
              ["resource", "used", "quota"],
              lines.map(([label, n, q, fmt]) => [
                label,
                fmt(n),
                q === null || q === undefined ? "no limit" : fmt(q),
              ]),
            ),
        );
      }),
    );
}
