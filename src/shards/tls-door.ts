import type { Socket } from "node:net";
import { type SecureContext, TLSSocket } from "node:tls";

/** A connection that spoke the other protocol than its port's. */
export type WrongProtocol = "tls-on-plain-port" | "plain-on-tls-port";

/** A TLS record of type handshake (22), version 3.x: how every ClientHello begins. */
export function isTlsHello(chunk: Buffer): boolean {
  return chunk[0] === 0x16 && (chunk.length < 2 || chunk[1] === 0x03);
}

/**
 * A fatal `handshake_failure` alert: the client stops at once with a TLS error of its own
 * (instead of hanging until the head timeout on an answer it can't read).
 */
const HANDSHAKE_FAILURE = Buffer.from([0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x28]);

export function refuseTlsHello(socket: Socket): void {
  socket.end(HANDSHAKE_FAILURE);
  socket.destroySoon?.();
}

const PLAIN_BODY = JSON.stringify({
  error:
    "this port speaks only HTTPS (TLS): use an https:// or wss:// URL (libsql:// URLs use TLS); " +
    "for plain HTTP, start the server without SHOAL_TLS_CERT",
});

/** The answer to plain HTTP on a TLS port, which the client can read. */
export const PLAIN_ON_TLS_PORT =
  "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nConnection: close\r\n" +
  `Content-Length: ${Buffer.byteLength(PLAIN_BODY)}\r\n\r\n${PLAIN_BODY}`;

/**
 * The server side of TLS over an accepted connection whose first bytes were already read: they
 * are put back, and the handshake runs on the socket's own handle (so the peer's address stays
 * what the rest of the server reads). A handshake must finish within `timeoutMs`; one that fails
 * (a scanner, a client refusing the certificate) ends its connection and nothing else.
 */
export function wrapTls(
  socket: Socket,
  firstBytes: Buffer,
  context: SecureContext,
  timeoutMs: number,
): TLSSocket {
  socket.pause();
  socket.unshift(firstBytes);
  const secure = new TLSSocket(socket, {
    isServer: true,
    secureContext: context,
    ALPNProtocols: ["http/1.1"],
  });
  const timer = setTimeout(() => secure.destroy(), timeoutMs);
  secure.once("secure", () => clearTimeout(timer));
  secure.once("close", () => clearTimeout(timer));
  secure.on("error", () => secure.destroy());
  return secure;
}

/**
 * The server name (SNI) a ClientHello asks for, when the first bytes hold it whole: a client that
 * addresses a database by its hostname (`libsql://<db>-<org>.<domain>`, as Turso's URLs do) names
 * it here, so its connection can go straight to the shard owning the database. Anything short or
 * unexpected answers undefined (the connection is then served by the node's main process).
 */
export function serverName(hello: Buffer): string | undefined {
  // Record header (5), handshake type 1 = ClientHello and length (4), version (2), random (32).
  let at = 5 + 4 + 2 + 32;
  if (hello.length < at + 1 || hello[5] !== 0x01) return undefined;
  at += 1 + hello[at]!; // session id
  if (hello.length < at + 2) return undefined;
  at += 2 + hello.readUInt16BE(at); // cipher suites
  if (hello.length < at + 1) return undefined;
  at += 1 + hello[at]!; // compression methods
  if (hello.length < at + 2) return undefined;
  const end = Math.min(hello.length, at + 2 + hello.readUInt16BE(at));
  at += 2;
  while (at + 4 <= end) {
    const type = hello.readUInt16BE(at);
    const size = hello.readUInt16BE(at + 2);
    at += 4;
    if (type === 0x0000 && at + 5 <= end && hello[at + 2] === 0x00) {
      const length = hello.readUInt16BE(at + 3);
      if (at + 5 + length > end) return undefined;
      return hello.toString("ascii", at + 5, at + 5 + length).toLowerCase();
    }
    at += size;
  }
  return undefined;
}
