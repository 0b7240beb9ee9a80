import type { Config } from "../config.js";
import { DiskSpace } from "../hosting/disk-space.js";
import type { Logger } from "../lib/logger.js";

/** The data folder's free space, with a log line each time it goes below the reserve or back. */
export function diskSpaceOf(config: Config, log: Logger): DiskSpace {
  return new DiskSpace(config.dataDir, config.diskReserveMb * 1024 * 1024, (s) => {
    const fields = { freeBytes: s.freeBytes, reserveBytes: s.reserveBytes };
    if (s.low)
      log.warn(
        fields,
        "free disk space is below SHOAL_DISK_RESERVE_MB: writes that grow databases and new databases are refused, history is pruned (see docs/operations/disk-full.md)",
      );
    else log.info(fields, "free disk space is back above SHOAL_DISK_RESERVE_MB: writes accepted again");
  });
}
