import { sha256Hex } from "../../lib/secrets.js";
import type { SigningKey } from "../../lib/signing-keys.js";
import { type Clock, isoTime } from "../../lib/time.js";
import type { Store } from "../../store/store.js";
import { NodeStartError } from "./local-node.js";

/** Fingerprint of a signing key's public half; the private key never leaves the node. */
export function keyFingerprint(key: SigningKey): string {
  return sha256Hex(`${key.publicJwk.crv ?? ""}:${key.publicJwk.x ?? ""}`);
}

/**
 * Every node must sign and check database tokens with the same key, or a token minted through
 * one node is refused by another. The first node records the key's fingerprint; a node whose
 * key differs is refused at start.
 */
export async function requireSharedKey(
  store: Store,
  clock: Clock,
  purpose: string,
  key: SigningKey,
  keyFile: string,
): Promise<void> {
  const mine = keyFingerprint(key);
  const recorded = await store.write((r) => r.nodes.recordKey(purpose, mine, isoTime(clock())));
  if (recorded === mine) return;
  throw new NodeStartError(
    `the ${purpose} signing key in ${keyFile} is not the one the other nodes sharing this store use ` +
      `(its fingerprint is ${mine.slice(0, 16)}…, the store expects ${recorded.slice(0, 16)}…). ` +
      "Copy the keys/ folder of a running node into this node's data folder and start it again. " +
      `(To replace the key everywhere instead, invalidating every database token issued so far, delete the row '${purpose}' from the cluster_keys table and give every node the new key.)`,
  );
}
