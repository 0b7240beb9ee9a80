import type { Logger } from "../lib/logger.js";
import { Throttle } from "../lib/throttle.js";
import type { TlsCertificates } from "../lib/tls-certificates.js";
import type { RouterOptions } from "../shards/router.js";

/** What a connection that spoke the other protocol is told in the log: once a minute per address. */
const WRONG_PROTOCOL_LOG_MS = 60_000;

/** The public port's TLS settings: the current context, and a log line for plain HTTP sent to it. */
export function tlsDoor(
  certificates: TlsCertificates,
  log: Logger,
): Pick<RouterOptions, "tls" | "wrongProtocol"> {
  const throttle = new Throttle(WRONG_PROTOCOL_LOG_MS);
  return {
    tls: () => certificates.context,
    wrongProtocol: (_w, remoteAddress) => {
      if (!throttle.due(remoteAddress ?? "")) return;
      log.warn(
        { remoteAddress },
        "plain HTTP arrived on the TLS port and was answered 400: the client should use https:// or wss://",
      );
    },
  };
}

/** The log line for a TLS handshake on a plain port, once a minute per address. */
export function plainDoor(log: Logger): Pick<RouterOptions, "wrongProtocol"> {
  const throttle = new Throttle(WRONG_PROTOCOL_LOG_MS);
  return {
    wrongProtocol: (_w, remoteAddress) => {
      if (!throttle.due(remoteAddress ?? "")) return;
      log.warn(
        { remoteAddress },
        "a TLS handshake arrived on this plain-HTTP port and was refused: the client should use http:// " +
          "(or the server SHOAL_TLS_CERT and SHOAL_TLS_KEY)",
      );
    },
  };
}
