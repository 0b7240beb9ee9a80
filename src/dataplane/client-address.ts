import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import { IpAllowlist } from "../lib/ip-allowlist.js";

/**
 * The address of the client behind a data-plane request, as checked against databases' IP
 * allowlists. It is the TCP peer's, unless that peer is one of the operator's trusted proxies:
 * then `X-Forwarded-For` is read from the right, skipping trusted hops, and the first address
 * that isn't a trusted proxy is the client. Entries a client could have written itself (left of
 * that) are never believed. An unreadable entry gives no address, which no allowlist allows.
 */
export function clientAddressResolver(trustedProxies: readonly string[]) {
  const trusted = trustedProxies.length > 0 ? new IpAllowlist(trustedProxies) : undefined;
  return (req: IncomingMessage): string | undefined => {
    const peer = req.socket.remoteAddress;
    if (!trusted?.allows(peer)) return peer;
    const header = req.headers["x-forwarded-for"];
    const hops = (Array.isArray(header) ? header.join(",") : (header ?? ""))
      .split(",")
      .map((h) => h.trim())
      .filter((h) => h !== "");
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i]!;
      if (isIP(hop) === 0) return undefined;
      if (!trusted.allows(hop)) return hop;
    }
    // Every hop is a trusted proxy (or there were none): the nearest one is the client.
    return hops[0] ?? peer;
  };
}

export type ClientAddress = ReturnType<typeof clientAddressResolver>;
