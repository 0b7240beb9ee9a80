import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { ClientAddress } from "../client-address.js";

/** Marks a request one node sent to another (the management API's forwarding uses the same). */
export const FORWARDED_BY = "x-shoal-forwarded-by";
/** The client's address as the forwarding node saw it, signed: `<address> <node> <ms> <hmac>`. */
export const CLIENT_PROOF = "x-shoal-client";
/** A proof older (or newer) than this is ignored, so one overheard can't be used for long. */
const PROOF_WINDOW_MS = 60_000;

/**
 * Signs and checks the client address a node hands on with a request it forwards. The holder
 * checks a database's IP allowlist against the client, not against the forwarding node; it takes
 * the address from the header only when the header is signed with the secret every node derives
 * from the shared database-token key (`derivedSecret`), so a tenant can't claim an address.
 */
export class ClientProof {
  constructor(
    private readonly secret: Buffer,
    private readonly now: () => number = Date.now,
  ) {}

  sign(address: string | undefined, node: string): string {
    const payload = `${address ?? "-"} ${node} ${this.now()}`;
    return `${payload} ${this.mac(payload)}`;
  }

  /** The client address a valid proof names; undefined (and null for "no address") otherwise. */
  check(header: string | string[] | undefined): string | null | undefined {
    if (typeof header !== "string") return undefined;
    const parts = header.split(" ");
    if (parts.length !== 4) return undefined;
    const [address, node, at, mac] = parts as [string, string, string, string];
    if (Math.abs(this.now() - Number(at)) > PROOF_WINDOW_MS) return undefined;
    const expected = Buffer.from(this.mac(`${address} ${node} ${at}`));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    return address === "-" ? null : address;
  }

  /** A resolver that believes a valid proof and otherwise asks `fallback` as before. */
  resolver(fallback: ClientAddress): ClientAddress {
    return (req: IncomingMessage) => {
      const proven = this.check(req.headers[CLIENT_PROOF]);
      if (proven === undefined) return fallback(req);
      return proven ?? undefined;
    };
  }

  private mac(payload: string): string {
    return createHmac("sha256", this.secret).update(payload).digest("base64url");
  }
}
