/**
 * The console's only way to Shoal's management API: same origin, the API token in the
 * Authorization header (never in a URL), and every failure turned into a sentence.
 */

const KEY = "shoal.console.token";

/** The API token lives in this tab's sessionStorage only: closing the tab or signing out forgets it. */
export const session = {
  get token(): string | null {
    return sessionStorage.getItem(KEY);
  },
  signIn(token: string): void {
    sessionStorage.setItem(KEY, token);
  },
  /** Forgets the token and everything else the console kept in this tab (the SQL history). */
  signOut(): void {
    for (const k of Object.keys(sessionStorage))
      if (k.startsWith("shoal.console.")) sessionStorage.removeItem(k);
  },
};

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** What each status means to a person, for answers that carry no message of their own. */
const STATUS_WORDS: Record<number, string> = {
  400: "Shoal refused the request as malformed",
  401: "Your API token was not accepted",
  402: "Your organization's plan does not allow this",
  403: "You are not allowed to do this",
  404: "Not found",
  409: "This conflicts with something that already exists",
  429: "Too many requests; wait a moment and try again",
  503: "Shoal is not ready; try again in a moment",
};

async function errorOf(res: Response): Promise<ApiError> {
  let detail = "";
  try {
    const body = (await res.json()) as { error?: unknown; message?: unknown };
    detail = String(body.error ?? body.message ?? "");
  } catch {
    // Not JSON (a proxy's error page, say): the status says enough.
  }
  const words = STATUS_WORDS[res.status] ?? `Shoal answered with status ${res.status}`;
  return new ApiError(detail ? `${words}: ${detail}` : `${words}.`, res.status);
}

let onUnauthorized: (message: string) => void = () => {};
/** Called when a signed-in request gets 401: the token was revoked or has expired. */
export function whenUnauthorized(fn: (message: string) => void): void {
  onUnauthorized = fn;
}

export async function request<T>(
  method: string,
  path: string,
  body?: unknown,
  token: string | null = session.token,
): Promise<T> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "omit",
      cache: "no-store",
    });
  } catch {
    throw new ApiError("Shoal could not be reached. Check that it is running and that you are online.", 0);
  }
  if (!res.ok) {
    const err = await errorOf(res);
    if (res.status === 401 && token && token === session.token) onUnauthorized(err.message);
    throw err;
  }
  const text = await res.text();
  return (text ? JSON.parse(text) : {}) as T;
}

export const api = {
  get: <T>(path: string) => request<T>("GET", path),
  post: <T>(path: string, body?: unknown) => request<T>("POST", path, body ?? {}),
  patch: <T>(path: string, body: unknown) => request<T>("PATCH", path, body),
  put: <T>(path: string, body: unknown) => request<T>("PUT", path, body),
  delete: <T>(path: string) => request<T>("DELETE", path),
};

/** Any thrown value as a sentence for the page. */
export function describe(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}

/** `/v1/organizations/<org>` with the slug escaped; the base of most paths. */
export const orgPath = (org: string) => `/v1/organizations/${encodeURIComponent(org)}`;
export const seg = encodeURIComponent;
