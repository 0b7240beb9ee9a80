import { useEffect, useState } from "preact/hooks";

/**
 * Hash routes (`#/orgs/acme/databases/orders`): the page is one document at `/console`, and the
 * fragment never reaches the server, so nothing about what a person looks at lands in a log.
 */
export type Route =
  | { view: "home" }
  | { view: "overview"; org: string }
  | { view: "databases"; org: string }
  | { view: "database"; org: string; db: string; tab: DatabaseTab }
  | { view: "sql"; org: string; db: string }
  | { view: "groups"; org: string }
  | { view: "group"; org: string; group: string }
  | { view: "members"; org: string }
  | { view: "tokens"; org: string }
  | { view: "audit"; org: string }
  | { view: "admin" };

/** The database page's tabs, each its own fragment so it can be linked to and gone back to. */
export const DATABASE_TABS = ["overview", "settings", "tokens", "delete"] as const;
export type DatabaseTab = (typeof DATABASE_TABS)[number];

const databaseTab = (sub: string | undefined): DatabaseTab =>
  (DATABASE_TABS as readonly string[]).includes(sub ?? "") ? (sub as DatabaseTab) : "overview";

export function parseRoute(hash: string): Route {
  const parts = hash
    .replace(/^#\/?/, "")
    .split("/")
    .filter(Boolean)
    .map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return p;
      }
    });
  if (parts[0] === "admin") return { view: "admin" };
  const [, org, section, name, sub] = parts;
  if (parts[0] !== "orgs" || !org) return { view: "home" };
  switch (section) {
    case undefined:
      return { view: "overview", org };
    case "databases":
      if (!name) return { view: "databases", org };
      return sub === "sql"
        ? { view: "sql", org, db: name }
        : { view: "database", org, db: name, tab: databaseTab(sub) };
    case "groups":
      return name ? { view: "group", org, group: name } : { view: "groups", org };
    case "members":
    case "tokens":
    case "audit":
      return { view: section, org };
    default:
      return { view: "overview", org };
  }
}

/** The fragment for a place in the console. */
export function href(...parts: string[]): string {
  return `#/${parts.map(encodeURIComponent).join("/")}`;
}

export function navigate(hash: string): void {
  if (location.hash !== hash) location.hash = hash;
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.hash));
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}
