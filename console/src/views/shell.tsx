import type { ComponentChildren } from "preact";
import { useMe } from "../context.js";
import { href, navigate, type Route } from "../router.js";
import { Button } from "../ui/kit.js";

const SECTIONS = [
  ["Overview", ""],
  ["Databases", "databases"],
  ["Groups", "groups"],
  ["Members", "members"],
  ["API tokens", "tokens"],
  ["Audit log", "audit"],
] as const;

/** Which section a route belongs to, so its nav link is marked current. */
function sectionOf(route: Route): string {
  switch (route.view) {
    case "database":
    case "sql":
      return "databases";
    case "group":
      return "groups";
    case "overview":
      return "";
    default:
      return route.view;
  }
}

/** The organization last shown, whose sections stay in the sidebar on pages outside any (Instance). */
let lastOrg: string | undefined;

export function Shell({ route, children }: { route: Route; children: ComponentChildren }) {
  const me = useMe();
  const org = "org" in route ? route.org : undefined;
  if (org) lastOrg = org;
  const personal = me.orgs.find((o) => o.type === "personal")?.slug ?? me.orgs[0]?.slug;
  const navOrg = org ?? (lastOrg && me.orgs.some((o) => o.slug === lastOrg) ? lastOrg : personal);
  const current = sectionOf(route);
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={href("orgs", org ?? me.user.username)}>
          Shoal
        </a>
        <div class="org-switch">
          <label class="label" for="org-switch">
            Organization
          </label>
          <select
            id="org-switch"
            value={org ?? ""}
            onChange={(e) => {
              const slug = e.currentTarget.value;
              navigate(current && route.view !== "admin" ? href("orgs", slug, current) : href("orgs", slug));
            }}
          >
            {!org && <option value="">Choose…</option>}
            {/* One joined or made elsewhere since sign-in (the page opened by its address). */}
            {org && !me.orgs.some((o) => o.slug === org) && <option value={org}>{org}</option>}
            {me.orgs.map((o) => (
              <option key={o.slug} value={o.slug}>
                {o.type === "personal" ? `${o.slug} (personal)` : o.name}
              </option>
            ))}
          </select>
        </div>
        <span class="who" title={me.user.email}>
          {me.user.username}
          {me.user.admin && <span class="badge">administrator</span>}
        </span>
        <Button onClick={() => me.signOut()}>Sign out</Button>
      </header>
      <nav class="nav" aria-label="Sections">
        <ul>
          {navOrg &&
            SECTIONS.map(([label, section]) => (
              <li key={label}>
                <a
                  href={section ? href("orgs", navOrg, section) : href("orgs", navOrg)}
                  aria-current={route.view !== "admin" && current === section ? "page" : undefined}
                >
                  {label}
                </a>
              </li>
            ))}
          {me.user.admin && (
            <li>
              <a href={href("admin")} aria-current={route.view === "admin" ? "page" : undefined}>
                Instance
              </a>
            </li>
          )}
        </ul>
      </nav>
      <main id="main" class="content" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}
