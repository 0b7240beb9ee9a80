// Runs @libsql/client over every TLS URL form against a Shoal, in a process of its own: the test's
// certificate reaches the client only through NODE_EXTRA_CA_CERTS, which Node reads at start.
// Prints one JSON object: for each scheme, the rows it counted after its insert, or its error.
import { createClient } from "@libsql/client";

const [hostPort, token] = process.argv.slice(2);
/** @type {Record<string, number | string>} */
const out = {};
for (const scheme of ["libsql", "https", "wss"]) {
  const db = createClient({ url: `${scheme}://${hostPort}/db/admin/d/`, authToken: token });
  try {
    await db.execute({ sql: "INSERT INTO seen (scheme) VALUES (?)", args: [scheme] });
    const tx = await db.transaction("write");
    await tx.execute({ sql: "INSERT INTO seen (scheme) VALUES (?)", args: [`${scheme}-tx`] });
    await tx.commit();
    out[scheme] = Number((await db.execute("SELECT count(*) AS n FROM seen")).rows[0]?.n);
  } catch (e) {
    out[scheme] = `error: ${e instanceof Error ? e.message : String(e)}`;
  } finally {
    db.close();
  }
}
process.stdout.write(JSON.stringify(out));
