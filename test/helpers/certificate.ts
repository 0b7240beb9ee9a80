import { generateKeyPairSync, randomBytes, sign } from "node:crypto";

/**
 * A self-signed certificate for tests, made here so that a machine needs nothing but `npm ci`
 * (no openssl binary, no certificate package): an ECDSA P-256 key and an X.509 v3 certificate
 * written in DER by hand, with the names given as subject alternative names (DNS names, and
 * IPv4 addresses). It is its own CA (basicConstraints cA), so a client given it as a trusted
 * certificate (`ca`, `NODE_EXTRA_CA_CERTS`) accepts the server that presents it.
 */
export function selfSignedCertificate(names: { dns?: string[]; ips?: string[]; notAfter?: Date } = {}): {
  cert: string;
  key: string;
} {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const dns = names.dns ?? ["localhost"];
  const ips = names.ips ?? ["127.0.0.1"];
  const subject = seq(set(seq(oid("2.5.4.3"), utf8(dns[0] ?? "shoal-test"))));
  const now = Date.now();
  const notAfter = names.notAfter ?? new Date(now + 2 * 86_400_000);
  const sanEntries = [
    ...dns.map((d) => tlv(0x82, Buffer.from(d, "ascii"))),
    ...ips.map((ip) => tlv(0x87, Buffer.from(ip.split(".").map(Number)))),
  ];
  const extensions = tlv(
    0xa3,
    seq(
      seq(oid("2.5.29.19"), tlv(0x01, Buffer.from([0xff])), octets(seq(tlv(0x01, Buffer.from([0xff]))))),
      seq(oid("2.5.29.17"), octets(seq(...sanEntries))),
    ),
  );
  const ecdsaSha256 = seq(oid("1.2.840.10045.4.3.2"));
  const tbs = seq(
    tlv(0xa0, integer(Buffer.from([2]))),
    integer(serial()),
    ecdsaSha256,
    subject,
    seq(time(new Date(now - 3_600_000)), time(notAfter)),
    subject,
    publicKey.export({ type: "spki", format: "der" }),
    extensions,
  );
  const signature = sign("sha256", tbs, privateKey);
  const der = seq(tbs, ecdsaSha256, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
  return {
    cert: pem("CERTIFICATE", der),
    key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
}

/** Eight random bytes whose first isn't zero, so the INTEGER stays in its shortest form. */
function serial(): Buffer {
  const b = randomBytes(8);
  b[0] = (b[0]! & 0x7f) | 0x01;
  return b;
}

function pem(label: string, der: Buffer): string {
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}

function tlv(tag: number, content: Buffer): Buffer {
  const n = content.length;
  const length =
    n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), length, content]);
}

const seq = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items));
const octets = (b: Buffer) => tlv(0x04, b);
const utf8 = (s: string) => tlv(0x0c, Buffer.from(s, "utf8"));

/** A positive INTEGER: a leading zero when the top bit is set. */
function integer(bytes: Buffer): Buffer {
  return tlv(0x02, bytes[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split(".").map(Number);
  const out = [a! * 40 + b!];
  for (const n of rest) {
    const groups: number[] = [];
    let v = n;
    do {
      groups.unshift(v & 0x7f);
      v >>>= 7;
    } while (v > 0);
    for (let i = 0; i < groups.length - 1; i++) groups[i]! |= 0x80;
    out.push(...groups);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime, YYMMDDHHMMSSZ (dates before 2050). */
function time(d: Date): Buffer {
  const text = d.toISOString().replace(/[-:T]/g, "").slice(2, 14);
  return tlv(0x17, Buffer.from(`${text}Z`, "ascii"));
}
