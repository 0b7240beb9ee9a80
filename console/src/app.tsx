import { useEffect, useMemo, useState } from "preact/hooks";
import { api, orgPath, seg, session, whenUnauthorized } from "./api.js";
import { type Me, MeContext, OrgContext, scopeOf, useMe } from "./context.js";
import { useLoad } from "./hooks.js";
import { href, navigate, parseRoute, type Route, useRoute } from "./router.js";
import type { Member, Organization, User } from "./types.js";
import { Busy, ErrorNote } from "./ui/kit.js";
import { Admin } from "./views/admin.js";
import { OrgView } from "./views/org-view.js";
import { Shell } from "./views/shell.js";
import { SignIn } from "./views/signin.js";

export function App() {
  const [token, setToken] = useState(session.token);
  const [message, setMessage] = useState<string | undefined>();
  const signOut = (why?: string) => {
    session.signOut();
    setMessage(why);
    setToken(null);
  };
  useEffect(() => whenUnauthorized((m) => signOut(`You were signed out. ${m}`)), []);
  if (!token) {
    return (
      <SignIn
        message={message}
        onSignedIn={() => {
          setMessage(undefined);
          setToken(session.token);
        }}
      />
    );
  }
  return <SignedIn key={token} signOut={signOut} />;
}

function SignedIn({ signOut }: { signOut: (why?: string) => void }) {
  const route = useRoute();
  const [orgTick, setOrgTick] = useState(0);
  const me = useLoad(async () => {
    const [{ user }, orgs] = await Promise.all([
      api.get<{ user: User }>("/v1/user"),
      api.get<Organization[]>("/v1/organizations"),
    ]);
    return { user, orgs };
  }, [orgTick]);
  const value = useMemo<Me | null>(
    () =>
      me.data ? { ...me.data, reloadOrgs: () => setOrgTick((t) => t + 1), signOut: () => signOut() } : null,
    [me.data],
  );
  useEffect(() => {
    // The address as it is now, not as rendered: a person (or a link) may have gone elsewhere since.
    if (route.view === "home" && value && parseRoute(location.hash).view === "home") {
      navigate(href("orgs", homeOrg(value)));
    }
  }, [route.view, value]);
  if (!value) {
    return (
      <main class="signin" id="main">
        {me.error ? <ErrorNote message={me.error} /> : <Busy label="Loading your account…" />}
      </main>
    );
  }
  return (
    <MeContext.Provider value={value}>
      <Shell route={route}>
        <Page route={route} />
      </Shell>
    </MeContext.Provider>
  );
}

/** The personal organization first, as `turso` does. */
const homeOrg = (me: Me) => me.orgs.find((o) => o.type === "personal")?.slug ?? me.orgs[0]?.slug ?? "";

function Page({ route }: { route: Route }) {
  if (route.view === "admin") return <Admin />;
  if (route.view === "home") return <Busy label="Opening your organization…" />;
  return <OrgScopeLoader route={route} />;
}

/** Loads the organization in the route and the caller's role in it, for every view under it. */
function OrgScopeLoader({ route }: { route: Extract<Route, { org: string }> }) {
  const [tick, setTick] = useState(0);
  const { user } = useMe();
  const scope = useLoad(async () => {
    const [{ organization }, member] = await Promise.all([
      api.get<{ organization: Organization }>(orgPath(route.org)),
      api.get<{ member: Member }>(`${orgPath(route.org)}/members/${seg(user.username)}`),
    ]);
    return { organization, role: member.member.role };
  }, [route.org, tick]);
  const value = useMemo(
    () =>
      scope.data ? scopeOf(scope.data.organization, scope.data.role, () => setTick((t) => t + 1)) : null,
    [scope.data],
  );
  if (!value || value.org.slug !== route.org) {
    return scope.error ? <ErrorNote message={scope.error} /> : <Busy label="Loading the organization…" />;
  }
  return (
    <OrgContext.Provider value={value}>
      <OrgView route={route} />
    </OrgContext.Provider>
  );
}
