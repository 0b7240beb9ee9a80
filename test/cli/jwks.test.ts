import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliHarness } from "../helpers/cli.js";

/** `shoal org jwks` against a real Shoal and a local identity provider's key set. */
let h: CliHarness;
let idp: Server;
let url: string;

beforeAll(async () => {
  const { publicKey } = await generateKeyPair("RS256", { extractable: true });
  const keys = [{ ...(await exportJWK(publicKey)), kid: "k1", alg: "RS256" }];
  idp = createServer((req, res) => {
    if (req.url === "/jwks.json") res.writeHead(200).end(JSON.stringify({ keys }));
    else res.writeHead(200).end("<html></html>");
  });
  await new Promise<void>((resolve) => idp.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
  // The key set is served on 127.0.0.1, which Shoal refuses to fetch from unless allowed.
  h = await CliHarness.start({ SHOAL_JWKS_PRIVATE_ADDRESSES: "allow" });
});
afterAll(async () => {
  await h?.close();
  idp.close();
});

describe("shoal org jwks", () => {
  it("saves, lists, templates and removes a key set", async () => {
    expect(
      await h.ok(["org", "jwks", "save", "idp", `${url}/jwks.json`, "--issuer", "https://idp.example"]),
    ).toBe("Organization admin now trusts key set idp.\n");
    expect(await h.json(["org", "jwks", "list"])).toEqual([
      { jwks_name: "idp", jwks_url: `${url}/jwks.json`, issuer: "https://idp.example", audience: null },
    ]);
    const table = (await h.ok(["org", "jwks", "list"])).trimEnd().split("\n");
    expect(table[0]?.split(/\s{2,}/)).toEqual(["NAME", "URL", "ISSUER", "AUDIENCE"]);
    expect(table[1]?.split(/\s{2,}/)).toEqual(["idp", `${url}/jwks.json`, "https://idp.example", "-"]);

    await h.ok(["db", "create", "signed-in"]);
    const id = (await h.json(["db", "show", "signed-in"])).DbId;
    expect(
      JSON.parse(await h.ok(["org", "jwks", "template", "--database", "signed-in", "--scope", "read-only"])),
    ).toEqual({
      a: "ro",
      id,
      perm: [],
    });
    expect(await h.fails(["org", "jwks", "template"])).toMatch(/either a database or a group/);
    const limited = [
      "org",
      "jwks",
      "template",
      "-d",
      "signed-in",
      "-p",
      "all:data_read",
      "-p",
      "notes:data_add",
    ];
    expect(JSON.parse(await h.ok(limited)).perm).toEqual([
      { t: null, a: ["data_read"] },
      { t: ["notes"], a: ["data_add"] },
    ]);

    expect(await h.fails(["org", "jwks", "save", "junk", `${url}/junk`])).toMatch(/JSON Web Key Set/);
    const loose = await h.run(["org", "jwks", "save", "loose", `${url}/jwks.json`]);
    expect(loose.code).toBe(0);
    expect(loose.stderr).toMatch(/Warning: no --issuer or --audience/);
    expect(await h.ok(["org", "jwks", "remove", "loose", "--yes"])).toBe("Key set loose removed.\n");
    expect(await h.fails(["org", "jwks", "remove", "idp"])).toContain("add --yes to confirm");
    expect(await h.ok(["org", "jwks", "remove", "idp", "--yes"])).toBe("Key set idp removed.\n");
    expect(await h.json(["org", "jwks", "list"])).toEqual([]);
  });
});
