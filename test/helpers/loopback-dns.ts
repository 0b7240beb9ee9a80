import dns from "node:dns";

type LookupCallback = (err: NodeJS.ErrnoException | null, address: unknown, family?: number) => void;

/**
 * Makes every hostname ending in `suffix` resolve to 127.0.0.1 inside this test process, so the
 * real clients can reach a database by its hostname (`<db>-<org>.shoal.test`) exactly as they
 * would in production, with no DNS server. Both fetch (undici) and ws resolve through dns.lookup.
 */
export function resolveToLoopback(suffix: string): void {
  const original = dns.lookup as unknown as (host: string, opts: unknown, cb: LookupCallback) => void;
  if ((dns.lookup as { shoalPatched?: boolean }).shoalPatched) return;
  const patched = (host: string, opts: unknown, cb?: LookupCallback) => {
    const callback = (typeof opts === "function" ? opts : cb) as LookupCallback;
    const options = (typeof opts === "object" && opts !== null ? opts : {}) as { all?: boolean };
    if (host.endsWith(suffix)) {
      if (options.all) callback(null, [{ address: "127.0.0.1", family: 4 }]);
      else callback(null, "127.0.0.1", 4);
      return;
    }
    original(host, typeof opts === "function" ? {} : opts, callback);
  };
  (patched as { shoalPatched?: boolean }).shoalPatched = true;
  (dns as { lookup: unknown }).lookup = patched;
}
