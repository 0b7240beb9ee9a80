import { decodeCursor, encodeCursor } from "../../lib/cursor.js";
import type { AuditLogRow } from "../../store/schema.js";
import { requireOrgAccess } from "../core/access-tx.js";
import { accountErrors } from "./errors.js";
import type { AccountCtx } from "./ports.js";

export interface AuditEntry {
  id: number;
  code: string;
  message: string;
  origin: string;
  author: string;
  createdAt: string;
  data: Record<string, unknown>;
}

export interface AuditPage {
  entries: AuditEntry[];
  page: number;
  pageSize: number;
  totalRows: number;
  totalPages: number;
  /** Cursor of the next (older) page, or null on the last one. */
  next: string | null;
}

const MAX_PAGE_SIZE = 1000;

function toEntry(r: AuditLogRow): AuditEntry {
  return {
    id: Number(r.id),
    code: r.code,
    message: r.message,
    origin: r.origin,
    author: r.author,
    createdAt: r.created_at,
    data: JSON.parse(r.data) as Record<string, unknown>,
  };
}

/**
 * An organization's audit log, newest first. Turso's clients page by number (`page`,
 * `page_size`); `cursor` (the `next` of the previous page) pages by key instead, which stays cheap
 * and stable however long the log grows while someone reads it. `code` and `author` narrow the
 * log to one kind of change or one person (a cursor is only valid with the filters it was made with).
 */
export async function listAuditLogs(
  ctx: AccountCtx,
  slug: string,
  q: { page?: number; pageSize?: number; limit?: number; cursor?: string; code?: string; author?: string },
): Promise<AuditPage> {
  if (q.pageSize !== undefined && q.limit !== undefined && q.pageSize !== q.limit) {
    throw accountErrors.twoPageSizes();
  }
  const pageSize = q.pageSize ?? q.limit ?? 100;
  if (pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
    throw accountErrors.pageSizeOutOfRange(
      q.pageSize === undefined && q.limit !== undefined ? "limit" : "page_size",
      MAX_PAGE_SIZE,
    );
  }
  const page = q.page ?? 1;
  if (page < 1) throw accountErrors.pageBelowOne();
  let before: number | undefined;
  if (q.cursor !== undefined) {
    const k = decodeCursor(q.cursor);
    if (typeof k !== "number") throw accountErrors.foreignCursor();
    before = k;
  }
  return ctx.deps.store.read(async (r) => {
    const { org } = await requireOrgAccess(r, ctx.actor, slug, "audit:read");
    const filter = { code: q.code, author: q.author };
    const totalRows = await r.audit.count(org.id, filter);
    const rows =
      q.cursor !== undefined
        ? await r.audit.listBefore(org.id, before, pageSize + 1, filter)
        : await r.audit.list(org.id, pageSize + 1, (page - 1) * pageSize, filter);
    const entries = rows.slice(0, pageSize).map(toEntry);
    const last = entries[entries.length - 1];
    return {
      entries,
      page,
      pageSize,
      totalRows,
      totalPages: Math.ceil(totalRows / pageSize),
      next: rows.length > pageSize && last ? encodeCursor(last.id) : null,
    };
  });
}
