import { BlockList, isIP } from "node:net";

/** Longest allowlist a database may have; a longer one is a configuration mistake, not a policy. */
export const MAX_ALLOWED_IPS = 256;

/**
 * Checks one entry of an allowlist (`203.0.113.7`, `10.0.0.0/8`, `2001:db8::/32`) and returns it
 * in canonical form, or throws a message saying what is wrong with it.
 */
export function canonicalEntry(entry: string): string {
  const trimmed = entry.trim();
  const [address = "", prefix, extra] = trimmed.split("/");
  const family = isIP(address);
  if (family === 0 || extra !== undefined) {
    throw new Error(`"${entry}" is not an IP address or a CIDR block (like 203.0.113.7 or 10.0.0.0/8)`);
  }
  if (prefix === undefined) return address.toLowerCase();
  const max = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) {
    throw new Error(`"${entry}" has an invalid prefix length: IPv${family} allows /0 to /${max}`);
  }
  return `${address.toLowerCase()}/${Number(prefix)}`;
}

/** An allowlist compiled for matching; addresses in IPv4-mapped IPv6 form match IPv4 entries. */
export class IpAllowlist {
  private readonly list = new BlockList();

  constructor(entries: readonly string[]) {
    for (const e of entries) {
      const [address = "", prefix] = e.split("/");
      const family = isIP(address) === 6 ? "ipv6" : "ipv4";
      if (prefix === undefined) this.list.addAddress(address, family);
      else this.list.addSubnet(address, Number(prefix), family);
    }
  }

  allows(peer: string | undefined): boolean {
    if (!peer) return false;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(peer);
    const address = mapped ? mapped[1]! : peer;
    return this.list.check(address, isIP(address) === 6 ? "ipv6" : "ipv4");
  }
}

const compiled = new Map<string, IpAllowlist>();

/**
 * The compiled allowlist of a stored JSON array, kept across requests: the data plane checks it on
 * every request, and a database's list changes rarely.
 */
export function allowlistOf(stored: string): IpAllowlist {
  let list = compiled.get(stored);
  if (!list) {
    if (compiled.size >= 10_000) compiled.clear();
    list = new IpAllowlist(JSON.parse(stored) as string[]);
    compiled.set(stored, list);
  }
  return list;
}
