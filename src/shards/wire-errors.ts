import { HranaError, ProtocolError } from "../dataplane/hrana/errors.js";
import { ReplicaUnavailableError } from "../domain/core/ports.js";
import { EncryptionKeyError, type KeyProblem } from "../engine/encryption/errors.js";
import {
  type AppError,
  BadGatewayError,
  ConflictError,
  type ErrorKind,
  ForbiddenError,
  InsufficientStorageError,
  InvalidError,
  LimitExceededError,
  MisdirectedError,
  NotFoundError,
  PayloadTooLargeError,
  QuotaExceededError,
  UnauthenticatedError,
  UnavailableError,
  UnprocessableError,
} from "../errors.js";

/** An error as it crosses the pipe between the node's processes. */
export interface WireError {
  name: string;
  message: string;
  /** The error's own fields (`kind`, `code`, `rawCode`, ...), as far as they clone. */
  props: Record<string, unknown>;
  stack?: string;
}

type Props = Record<string, unknown>;
const str = (v: unknown) => (typeof v === "string" ? v : undefined);

/** Each application error kind's class: the API maps kinds, and some callers test the class. */
const BY_KIND: Record<ErrorKind, (message: string, code?: string) => AppError> = {
  invalid: (m, c) => new InvalidError(m, c),
  unauthenticated: (m, c) => new UnauthenticatedError(m, c),
  forbidden: (m, c) => new ForbiddenError(m, c),
  not_found: (m, c) => new NotFoundError(m, c),
  conflict: (m, c) => new ConflictError(m, c),
  limit_exceeded: (m, c) => new LimitExceededError(m, c),
  quota_exceeded: (m, c) => new QuotaExceededError(m, c),
  unprocessable: (m, c) => new UnprocessableError(m, c),
  unavailable: (m, c) => new UnavailableError(m, c),
  misdirected: (m, c) => new MisdirectedError(m, c),
  bad_gateway: (m, c) => new BadGatewayError(m, c),
  too_large: (m, c) => new PayloadTooLargeError(m, c),
  insufficient_storage: (m, c) => new InsufficientStorageError(m, c),
};

/** Classes the receiving side tells apart with `instanceof`, rebuilt from their fields. */
const CLASSES: Record<string, (message: string, p: Props) => Error> = {
  HranaError: (m, p) => new HranaError(p.code as HranaError["code"], m),
  ProtocolError: (m, p) => new ProtocolError(m, p.code as HranaError["code"]),
  ReplicaUnavailableError: (_m, p) => new ReplicaUnavailableError(String(p.location), String(p.reason)),
  EncryptionKeyError: (m, p) => new EncryptionKeyError(p.problem as KeyProblem, m),
  MisdirectedError: (m, p) =>
    new MisdirectedError(m, str(p.code), p.holder as { id: string; url: string } | undefined),
};

/** Plain fields only: what the structured clone takes without surprise. */
function ownFields(e: object): Props {
  const out: Props = {};
  for (const [k, v] of Object.entries(e)) {
    if (k === "stack" || k === "message") continue;
    const t = typeof v;
    if (v === null || t === "string" || t === "number" || t === "boolean" || t === "bigint") out[k] = v;
    else if (t === "object" && (Object.getPrototypeOf(v) === Object.prototype || Array.isArray(v))) {
      try {
        out[k] = structuredClone(v);
      } catch {
        // Not cloneable: left out.
      }
    }
  }
  return out;
}

export function errorToWire(e: unknown): WireError {
  if (e instanceof Error) {
    const name = e.constructor?.name && e.constructor.name !== "Error" ? e.constructor.name : e.name;
    const wire: WireError = { name, message: e.message, props: ownFields(e) };
    if (e.stack !== undefined) wire.stack = e.stack;
    return wire;
  }
  return { name: "Error", message: String(e), props: {} };
}

/** The error the other side threw, as the class this side's code expects where it knows it. */
export function errorFromWire(w: WireError): Error {
  const known = CLASSES[w.name];
  let e: Error;
  if (known) e = known(w.message, w.props);
  else if (typeof w.props.kind === "string" && w.props.kind in BY_KIND)
    e = BY_KIND[w.props.kind as ErrorKind](w.message, str(w.props.code));
  else {
    e = new Error(w.message);
    Object.assign(e, w.props);
    if (w.name !== "Error") Object.defineProperty(e, "name", { value: w.name, configurable: true });
  }
  if (w.stack !== undefined) e.stack = `${w.stack}\n    (across the pipe between Shoal's processes)`;
  return e;
}
