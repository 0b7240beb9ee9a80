import type { Route } from "../router.js";
import { Audit } from "./audit.js";
import { DatabasePage } from "./database.js";
import { Databases } from "./databases.js";
import { GroupPage } from "./group.js";
import { Groups } from "./groups.js";
import { Members } from "./members.js";
import { Overview } from "./overview.js";
import { SqlEditor } from "./sql.js";
import { Tokens } from "./tokens.js";

/** The view for a route inside an organization (the scope is already loaded). */
export function OrgView({ route }: { route: Extract<Route, { org: string }> }) {
  switch (route.view) {
    case "overview":
      return <Overview />;
    case "databases":
      return <Databases />;
    case "database":
      return <DatabasePage key={route.db} name={route.db} tab={route.tab} />;
    case "sql":
      return <SqlEditor key={route.db} name={route.db} />;
    case "groups":
      return <Groups />;
    case "group":
      return <GroupPage key={route.group} name={route.group} />;
    case "members":
      return <Members />;
    case "tokens":
      return <Tokens />;
    case "audit":
      return <Audit />;
  }
}
