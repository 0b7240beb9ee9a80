import { CliError, messageOf } from "./errors.js";

/** What to tell the user to do when the API answers a status, unless the command knows better. */
const HINTS: Record<number, string> = {
  401: "the API token was refused: log in again with `shoal login <url> --token <API token>` (or set SHOAL_TOKEN)",
  402: "the organization's plan has no room for this: remove something, or ask the operator for another plan",
  403: "your token or your role in the organization doesn't allow this; check the organization with `shoal org list`",
  404: "check the name (`shoal db list`, `shoal group list`, `shoal org list`)",
  409: "choose another name, or remove the existing one first",
  429: "too many requests for this token: wait a moment and retry",
};

export interface CallOptions {
  body?: unknown;
  query?: Record<string, string | undefined>;
  /** Hints for this call's statuses, in place of the general ones. */
  hints?: Partial<Record<number, string>>;
}

/** The Platform API, as any client reaches it: JSON over HTTP with an API token. */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly token: string,
  ) {}

  /** The URL of an API path, with its query. */
  url(path: string, query: Record<string, string | undefined> = {}): string {
    const u = new URL(path, this.baseUrl.endsWith("/") ? this.baseUrl : `${this.baseUrl}/`);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) u.searchParams.set(k, v);
    return u.toString();
  }

  async call<T = Record<string, unknown>>(method: string, path: string, opts: CallOptions = {}): Promise<T> {
    const res = await this.send(method, this.url(path.replace(/^\//, ""), opts.query), {
      ...(opts.body !== undefined
        ? { body: JSON.stringify(opts.body), headers: { "content-type": "application/json" } }
        : {}),
    });
    const text = await res.text();
    if (!res.ok) throw apiError(res.status, text, opts.hints);
    try {
      return (text ? JSON.parse(text) : {}) as T;
    } catch {
      throw new CliError(
        `${this.baseUrl} answered ${method} ${path} with something that is not JSON`,
        wrongServer,
      );
    }
  }

  /** A raw request with the API token, for uploads and downloads; failures to connect are explained. */
  async send(method: string, url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set("authorization", `Bearer ${this.token}`);
    try {
      return await fetch(url, { ...init, method, headers });
    } catch (e) {
      throw unreachable(this.baseUrl, e);
    }
  }
}

const wrongServer = "check that the URL is Shoal's (`shoal login <url>`, or SHOAL_URL)";

export function unreachable(base: string, e: unknown): CliError {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  const why = cause?.code ?? cause?.message ?? messageOf(e);
  return new CliError(
    `could not reach Shoal at ${base} (${why})`,
    "check the URL (`shoal login <url>`, or SHOAL_URL) and that Shoal is running there (`shoal start`)",
  );
}

/** An error answer as a CliError: the server's own message, and what to do. */
export function apiError(
  status: number,
  text: string,
  hints: Partial<Record<number, string>> = {},
): CliError {
  let message = text.trim();
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown };
    const m = body.error ?? body.message;
    if (typeof m === "string") message = m;
  } catch {
    // not JSON: the text itself is the best there is
  }
  const hint =
    hints[status] ?? HINTS[status] ?? (status >= 500 ? "the server failed: see its log" : undefined);
  return new CliError(`${message || "no message"} (HTTP ${status})`, hint);
}

/** Every item of a list route, following `pagination.next` when the server pages it. */
export async function listAll<T>(
  api: ApiClient,
  path: string,
  key: string,
  query: Record<string, string | undefined> = {},
  hints: CallOptions["hints"] = {},
): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await api.call<Record<string, unknown> & { pagination?: { next?: string | null } }>(
      "GET",
      path,
      {
        query: { ...query, ...(cursor ? { cursor } : {}) },
        hints,
      },
    );
    items.push(...((page[key] as T[] | undefined) ?? []));
    const next = page.pagination?.next;
    if (!next) return items;
    cursor = next;
  }
}
