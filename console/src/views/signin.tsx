import { useState } from "preact/hooks";
import { request, session } from "../api.js";
import { useAction } from "../hooks.js";
import { Button, ErrorNote, Field } from "../ui/kit.js";

/** Signing in is checking a pasted API token against `GET /v1/user` before keeping it. */
export function SignIn(props: { message?: string; onSignedIn: () => void }) {
  const [token, setToken] = useState("");
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const t = token.trim();
    if (!t) return;
    const ok = await action.run(async () => {
      try {
        await request("GET", "/v1/user", undefined, t);
      } catch (err) {
        const status = (err as { status?: number }).status;
        if (status === 401) {
          throw new Error(
            "That token was not accepted: it is unknown, revoked or expired. Check that you pasted the whole token.",
          );
        }
        throw err;
      }
      return true;
    });
    if (ok) {
      session.signIn(t);
      setToken("");
      props.onSignedIn();
    }
  };
  return (
    <main class="signin" id="main">
      <h1>Shoal console</h1>
      <form onSubmit={submit} class="card">
        <p>
          Sign in with a Shoal API token. On a new instance the administrator's token is printed at the first
          start and saved in <code>data/admin-token</code>.
        </p>
        <Field label="API token" hint="Kept in this browser tab only, until you sign out or close the tab.">
          <input
            type="password"
            name="token"
            autocomplete="off"
            spellcheck={false}
            required
            value={token}
            onInput={(e) => setToken(e.currentTarget.value)}
          />
        </Field>
        <ErrorNote message={action.error ?? props.message} />
        <Button type="submit" kind="primary" busy={action.busy}>
          {action.busy ? "Checking the token…" : "Sign in"}
        </Button>
      </form>
    </main>
  );
}
