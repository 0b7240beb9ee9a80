/**
 * Tokens pasted into a URL: a path segment that looks like one is never logged or echoed.
 * A token looks like a JWT (`eyJ...`, what Shoal's tokens are), or a long run with capitals or
 * symbols; names in paths (organizations, databases, groups, ids) are lowercase letters, digits,
 * dashes and dots.
 */
export function looksLikeToken(segment: string): boolean {
  if (segment.length >= 16 && segment.startsWith("eyJ")) return true;
  return segment.length >= 24 && !/^[a-z0-9._@-]+$/.test(segment);
}

const REDACTED = "[redacted]";

/** A request path as it may be logged: segments that look like tokens replaced. */
export function loggablePath(path: string): string {
  if (path.length < 24) return path;
  return path
    .split("/")
    .map((s) => (looksLikeToken(s) ? REDACTED : s))
    .join("/");
}

/** A name taken from the path, as an error message may repeat it. */
export function echoable(name: string): string {
  return looksLikeToken(name)
    ? "[redacted: it looks like a token; send tokens in the Authorization header, never in the URL]"
    : name;
}
