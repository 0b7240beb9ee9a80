import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pipeline, setupDatabase } from "../helpers/dataplane.js";
import { startTestShoal, type TestShoal } from "../helpers/shoal.js";

let h: TestShoal;

beforeAll(async () => {
  h = await startTestShoal();
});
afterAll(() => h.close());

const statement = (sql: string, args: number[] = []) => ({
  type: "execute",
  stmt: { sql, args: args.map((v) => ({ type: "integer", value: String(v) })) },
});

describe("pipelines of one statement", () => {
  it("run and close in one go, so many at once on one database share a connection", async () => {
    const db = await setupDatabase(h);
    const base = db.urls.httpPath;
    await pipeline(base, db.token, { requests: [statement("CREATE TABLE t (x)"), { type: "close" }] });
    let most = 0;
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all(
        Array.from({ length: 32 }, (_, i) =>
          pipeline(base, db.token, {
            requests: [statement("INSERT INTO t VALUES (?)", [round * 32 + i]), { type: "close" }],
          }),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(32).fill(200));
      most = Math.max(most, (await h.shoal.deps.shards.stats()).open);
    }
    // Waiting between a pipeline's statement and its close let the others in while it still held
    // its connection: they each opened one, up to one per request in flight.
    expect(most).toBeLessThanOrEqual(2);
    const count = await pipeline(base, db.token, { requests: [statement("SELECT count(*) FROM t")] });
    expect(count.body.results[0].response.result.rows[0][0].value).toBe("320");
  });
});
