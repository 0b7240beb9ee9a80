/** A raw HTTP answer, body parsed as JSON when possible. */
export interface Answer {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface CallOptions {
  token?: string | null;
  /** A string is sent as-is (with no content type unless `contentType` says so); an object as JSON. */
  body?: unknown;
  contentType?: string;
  headers?: Record<string, string>;
}

/** Calls Shoal over a real socket with exactly the headers and body given. */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  opts: CallOptions = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (typeof opts.body === "string") body = opts.body;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["content-type"] ??= "application/json";
  }
  if (opts.contentType) headers["content-type"] = opts.contentType;
  const res = await fetch(baseUrl + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text === "" ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** A client bound to one base URL and token. */
export function client(baseUrl: string, token: string | null) {
  return {
    get: (path: string, o: CallOptions = {}) => call(baseUrl, "GET", path, { token, ...o }),
    post: (path: string, body?: unknown, o: CallOptions = {}) =>
      call(baseUrl, "POST", path, { token, body, ...o }),
    patch: (path: string, body?: unknown, o: CallOptions = {}) =>
      call(baseUrl, "PATCH", path, { token, body, ...o }),
    put: (path: string, body?: unknown, o: CallOptions = {}) =>
      call(baseUrl, "PUT", path, { token, body, ...o }),
    delete: (path: string, o: CallOptions = {}) => call(baseUrl, "DELETE", path, { token, ...o }),
  };
}

export type Client = ReturnType<typeof client>;
