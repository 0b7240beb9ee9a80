/** What the router reads of a connection's first request before handing the connection on. */
export interface RequestHead {
  method: string;
  url: string;
  host: string | undefined;
}

const CRLF2 = Buffer.from("\r\n\r\n");

/** Where the head ends in `buf` (the index just past its blank line), or -1 while it hasn't. */
export function headEnd(buf: Buffer): number {
  const i = buf.indexOf(CRLF2);
  return i === -1 ? -1 : i + 4;
}

/**
 * The request line and Host header of a complete request head; undefined for a head that isn't
 * HTTP/1 (the server it goes to answers it with 400, as it would have anyway). Only what routing
 * needs is read: the process that serves the connection parses the head again, fully.
 */
export function parseHead(buf: Buffer, end: number): RequestHead | undefined {
  const text = buf.toString("latin1", 0, end);
  const lineEnd = text.indexOf("\r\n");
  const [method, url, version] = text.slice(0, lineEnd).split(" ");
  if (!method || !url || !version?.startsWith("HTTP/1.")) return undefined;
  let host: string | undefined;
  let at = lineEnd + 2;
  while (at < end - 2) {
    const next = text.indexOf("\r\n", at);
    if (next === -1) break;
    const colon = text.indexOf(":", at);
    if (colon !== -1 && colon < next && colon - at === 4 && text.slice(at, colon).toLowerCase() === "host") {
      host = text.slice(colon + 1, next).trim();
      break;
    }
    at = next + 2;
  }
  return { method, url, host };
}
