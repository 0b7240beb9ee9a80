import { hkdfSync } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { type CryptoKey, exportJWK, generateKeyPair, importJWK, type JWK } from "jose";

/** An Ed25519 key pair used to sign and verify JWTs. */
export interface SigningKey {
  /** Key id, written into the JWT header so verifiers pick the right key after a rotation. */
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  publicJwk: JWK;
}

/**
 * Loads the key stored at `<dir>/<name>.jwk`, creating it on first use. The private key lives only
 * in that file (mode 0600 in a 0700 folder); nothing returns it to a caller outside the process.
 */
export async function loadOrCreateSigningKey(dir: string, name: string): Promise<SigningKey> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, `${name}.jwk`);
  let jwk: JWK;
  try {
    jwk = JSON.parse(await readFile(file, "utf8")) as JWK;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    const pair = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
    jwk = { ...(await exportJWK(pair.privateKey)), kid: `${name}-${Date.now().toString(36)}` };
    // Write then rename so a crash never leaves a half-written key behind.
    const tmp = `${file}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify(jwk), { mode: 0o600 });
    await rename(tmp, file);
  }
  return fromJwk(jwk);
}

async function fromJwk(jwk: JWK): Promise<SigningKey> {
  const { d: _secret, ...pub } = jwk;
  return {
    kid: jwk.kid ?? "default",
    privateKey: (await importJWK({ ...jwk, alg: "EdDSA" }, "EdDSA")) as CryptoKey,
    publicKey: (await importJWK({ ...pub, alg: "EdDSA" }, "EdDSA")) as CryptoKey,
    publicJwk: pub,
  };
}

/**
 * A 32-byte secret derived (HKDF-SHA256) from the private half of the key at `<dir>/<name>.jwk`,
 * for `label`'s use only. Every node sharing a store has the same signing key (checked at start),
 * so they all derive the same secret without another file to copy; the key itself stays unread
 * by anything else, and nothing learns it from the secret.
 */
export async function derivedSecret(dir: string, name: string, label: string): Promise<Buffer> {
  const jwk = JSON.parse(await readFile(path.join(dir, `${name}.jwk`), "utf8")) as JWK;
  if (!jwk.d) throw new Error(`${name}.jwk holds no private key`);
  return Buffer.from(hkdfSync("sha256", Buffer.from(jwk.d, "base64url"), "shoal", label, 32));
}
