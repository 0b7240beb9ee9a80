import { z } from "@hono/zod-openapi";
import {
  getOrganizationUsage,
  type Invoice,
  listInvoices,
  type UsageAmounts,
} from "../../domain/plans/billing.js";
import { OrgParams, optional } from "../params.js";
import { type Route, route } from "../route.js";

const tags = ["Billing"];
const refused = { 403: "Not a member, or a group-scoped token." };

const UsageWire = z.object({
  rows_read: z.number(),
  rows_written: z.number(),
  storage_bytes: z.number(),
  bytes_synced: z.number(),
});
const usageWire = (u: UsageAmounts): z.infer<typeof UsageWire> => ({
  rows_read: u.rowsRead,
  rows_written: u.rowsWritten,
  storage_bytes: u.storageBytes,
  bytes_synced: u.bytesSynced,
});

const InvoiceWire = z
  .object({
    invoice_number: z.string().openapi({ example: "ACME-202607" }),
    amount_due: z.string().openapi({ description: "The plan's monthly price.", example: "29.00" }),
    due_date: z.string().openapi({ description: "End of the period.", example: "2026-08-01T00:00:00.000Z" }),
    paid_at: z.string().openapi({ description: "Always empty: Shoal takes no payments." }),
    payment_failed_at: z.string().openapi({ description: "Always empty." }),
    invoice_pdf: z.string().openapi({ description: "Always empty: there is no document." }),
    hosted_invoice_url: z.string().openapi({ description: "Always empty." }),
    status: z.enum(["upcoming", "issued"]),
    plan: z.string(),
    period_start: z.string(),
    period_end: z.string(),
    lines: z
      .array(
        z.object({
          item: z.enum(["rows_read", "rows_written", "storage_bytes"]),
          used: z.number(),
          included: z.number().nullable().openapi({ description: "The plan's quota; null is unlimited." }),
          over: z.number().openapi({ description: "Usage past the quota." }),
        }),
      )
      .openapi({ description: "What the period used against the plan." }),
  })
  .openapi("Invoice");

const invoiceWire = (i: Invoice): z.infer<typeof InvoiceWire> => ({
  invoice_number: i.number,
  amount_due: i.amountDue,
  due_date: i.dueDate,
  paid_at: "",
  payment_failed_at: "",
  invoice_pdf: "",
  hosted_invoice_url: "",
  status: i.status,
  plan: i.plan,
  period_start: i.periodStart,
  period_end: i.periodEnd,
  lines: i.lines,
});

export const billingRoutes: Route[] = [
  route({
    method: "get",
    path: "/v1/organizations/{organizationName}/usage",
    summary: "Retrieve the organization's usage",
    description:
      "This calendar month (UTC): rows read and written by every database (including ones deleted this month), storage measured now, and what the organization holds (databases, groups, locations). Per database, the same shape as a database's usage. Not for group-scoped tokens.",
    tags,
    params: OrgParams,
    response: z.object({
      organization: z.object({
        uuid: z.string(),
        usage: UsageWire.extend({ databases: z.number(), locations: z.number(), groups: z.number() }),
        databases: z.array(
          z.object({
            uuid: z.string(),
            instances: z.array(z.object({ uuid: z.string(), usage: UsageWire })),
            usage: UsageWire,
            total: UsageWire,
          }),
        ),
      }),
    }),
    errors: refused,
    handler: async ({ ctx, params }) => {
      const u = await getOrganizationUsage(ctx, params.organizationName);
      return {
        organization: {
          uuid: u.orgId,
          usage: {
            ...usageWire(u.usage),
            databases: u.usage.databases,
            locations: u.usage.locations,
            groups: u.usage.groups,
          },
          databases: u.databases.map((d) => ({
            uuid: d.dbId,
            instances: d.instances.map((i) => ({ uuid: i.uuid, usage: usageWire(i.usage) })),
            usage: usageWire(d.total),
            total: usageWire(d.total),
          })),
        },
      };
    },
  }),
  route({
    method: "get",
    path: "/v1/organizations/{organizationName}/invoices",
    summary: "List invoices",
    description:
      "One invoice per calendar month that had usage, newest first; the current month is the `upcoming` one. Shoal takes no payments: an invoice states the current plan's price and, line by line, what the month used against the plan's quotas. `type` picks `upcoming`, `issued` (past months) or `all` (the default). Not for group-scoped tokens.",
    tags,
    params: OrgParams,
    query: z.object({
      type: optional(z.enum(["all", "upcoming", "issued"])).openapi({ example: "all" }),
    }),
    response: z.object({ invoices: z.array(InvoiceWire) }),
    errors: { 400: "Invalid type.", ...refused },
    handler: async ({ ctx, params, query }) => ({
      invoices: (await listInvoices(ctx, params.organizationName, query.type ?? "all")).map(invoiceWire),
    }),
  }),
];
