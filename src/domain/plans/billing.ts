import { derivedUuid } from "../../lib/ids.js";
import type { OrganizationRow } from "../../store/schema.js";
import type { Repos } from "../../store/store.js";
import { requireOrgAccess } from "../core/access-tx.js";
import { storageOf } from "./blocking-tx.js";
import { planErrors } from "./errors.js";
import { currentPeriod } from "./period.js";
import type { PlanCtx } from "./ports.js";
import { type Quotas, toPlan } from "./views.js";

export interface UsageAmounts {
  rowsRead: number;
  rowsWritten: number;
  storageBytes: number;
  /** Bytes sent to replicas; not counted yet, so always 0. */
  bytesSynced: number;
}

export interface DatabaseMonthUsage {
  dbId: string;
  instances: Array<{ uuid: string; usage: UsageAmounts }>;
  total: UsageAmounts;
}

export interface OrganizationUsage {
  orgId: string;
  usage: UsageAmounts & { databases: number; groups: number; locations: number };
  databases: DatabaseMonthUsage[];
}

export type InvoiceItem = "rows_read" | "rows_written" | "storage_bytes";

/** One line of an invoice: what the period used of one quota. */
export interface InvoiceLine {
  item: InvoiceItem;
  used: number;
  /** The plan's quota; null is unlimited. */
  included: number | null;
  /** Usage past the quota (allowed with overages on). */
  over: number;
}

export interface Invoice {
  number: string;
  /** `YYYY-MM`. */
  month: string;
  /** `upcoming`: the current month, still counting; `issued`: a past month. */
  status: "upcoming" | "issued";
  plan: string;
  amountDue: string;
  periodStart: string;
  periodEnd: string;
  dueDate: string;
  lines: InvoiceLine[];
}

export type InvoiceFilter = "all" | "upcoming" | "issued";

/**
 * Usage and invoices cover the whole organization, so a token restricted to one group may not
 * read them; viewers may.
 */
async function requireBillingReader(r: Repos, ctx: PlanCtx, slug: string): Promise<OrganizationRow> {
  const { org } = await requireOrgAccess(r, ctx.actor, slug, "read");
  if (ctx.actor.groupId !== null) {
    throw planErrors.groupTokenCannotReadUsage();
  }
  return org;
}

/**
 * `GET …/usage`: the current calendar month (UTC) of the organization. Rows come from the usage
 * meter (flushed first, so they are exact up to this request) and include databases deleted
 * during the month; storage is measured from the files now. Every statement runs on the primary,
 * so its instance carries the row counts.
 */
export async function getOrganizationUsage(ctx: PlanCtx, slug: string): Promise<OrganizationUsage> {
  const org = await ctx.deps.store.read((r) => requireBillingReader(r, ctx, slug));
  await ctx.deps.meter.flush();
  const p = currentPeriod(ctx.deps.clock());
  const { totals, perDb, dbs, holdings, locations } = await ctx.deps.store.read(async (r) => {
    const dbs = await r.databases.list(org.id);
    return {
      dbs,
      totals: await r.usage.orgTotals(org.id, p.fromDay, p.toDay),
      perDb: await r.usage.orgTotalsByDatabase(org.id, p.fromDay, p.toDay),
      holdings: await r.plans.holdingsOf(org.id),
      locations: await r.groups.locationsOf([...new Set(dbs.map((d) => d.group_id))]),
    };
  });
  const databases = dbs.map((d): DatabaseMonthUsage => {
    const t = perDb.get(d.id) ?? { rows_read: 0, rows_written: 0 };
    const instances = (locations.get(d.group_id) ?? []).map((location) => {
      const primary = location === d.primary_location;
      return {
        uuid: derivedUuid(d.id, location),
        usage: {
          rowsRead: primary ? t.rows_read : 0,
          rowsWritten: primary ? t.rows_written : 0,
          storageBytes: ctx.deps.files.sizeOf(location, d.id),
          bytesSynced: 0,
        },
      };
    });
    const storageBytes = ctx.deps.files.sizeOf(d.primary_location, d.id);
    return {
      dbId: d.id,
      instances,
      total: { rowsRead: t.rows_read, rowsWritten: t.rows_written, storageBytes, bytesSynced: 0 },
    };
  });
  return {
    orgId: org.id,
    usage: {
      rowsRead: totals.rows_read,
      rowsWritten: totals.rows_written,
      storageBytes: databases.reduce((n, d) => n + d.total.storageBytes, 0),
      bytesSynced: 0,
      ...holdings,
    },
    databases,
  };
}

function line(item: InvoiceItem, used: number, included: number | null): InvoiceLine {
  return { item, used, included, over: included === null ? 0 : Math.max(0, used - included) };
}

function nextMonth(month: string): string {
  const [y, m] = month.split("-").map(Number) as [number, number];
  return new Date(Date.UTC(y, m, 1)).toISOString().slice(0, 7);
}

/**
 * `GET …/invoices`: one invoice per calendar month that had usage, plus the current month as the
 * upcoming one; newest first. Shoal takes no payments: an invoice states the plan's price and what
 * the month used against its quotas. Plans aren't kept per month, so every invoice is priced with
 * the organization's current plan; storage is known only for now, so only the upcoming invoice
 * has a storage line.
 */
export async function listInvoices(ctx: PlanCtx, slug: string, filter: InvoiceFilter): Promise<Invoice[]> {
  const org = await ctx.deps.store.read((r) => requireBillingReader(r, ctx, slug));
  await ctx.deps.meter.flush();
  const current = currentPeriod(ctx.deps.clock()).month;
  const { months, plan, storage } = await ctx.deps.store.read(async (r) => {
    const row = await r.plans.find(org.plan);
    const storage = filter === "issued" ? 0 : await storageOf(r, ctx.deps, org.id);
    return { months: await r.usage.orgMonthlyTotals(org.id), plan: row ? toPlan(row) : undefined, storage };
  });
  if (!months.some((m) => m.month === current)) {
    months.unshift({ month: current, rows_read: 0, rows_written: 0, queries: 0 });
  }
  const quotas: Partial<Quotas> = plan?.quotas ?? {};
  const price = plan ? Number(plan.price).toFixed(2) : "0.00";
  return months
    .filter((m) => m.month <= current)
    .filter((m) => filter === "all" || (filter === "upcoming") === (m.month === current))
    .map((m): Invoice => {
      const upcoming = m.month === current;
      const end = `${nextMonth(m.month)}-01T00:00:00.000Z`;
      const lines = [
        line("rows_read", m.rows_read, quotas.rowsRead ?? null),
        line("rows_written", m.rows_written, quotas.rowsWritten ?? null),
      ];
      if (upcoming) lines.push(line("storage_bytes", storage, quotas.storageBytes ?? null));
      return {
        number: `${org.slug.toUpperCase()}-${m.month.replace("-", "")}`,
        month: m.month,
        status: upcoming ? "upcoming" : "issued",
        plan: org.plan,
        amountDue: price,
        periodStart: `${m.month}-01T00:00:00.000Z`,
        periodEnd: end,
        dueDate: end,
        lines,
      };
    });
}
