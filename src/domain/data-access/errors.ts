import { ConflictError } from "../../errors.js";

export function awaitingUpload(name: string): ConflictError {
  return new ConflictError(
    `database ${name} has no content yet: it was created for an upload (seed type database_upload), so upload a SQLite file to https://<database hostname>/v1/upload first`,
    "DATABASE_AWAITING_UPLOAD",
  );
}
