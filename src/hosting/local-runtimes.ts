import type { HostedDatabases } from "../engine/hosted-databases.js";
import type { InstanceFiles } from "../engine/instance-files.js";
import type { SchemaChange } from "../engine/schema-journal.js";
import type { DatabaseWithPlacement } from "../store/databases.js";
import { swapInRestored } from "./backup-swap.js";
import type { DatabaseRuntimes, FramePosition } from "./database-runtimes.js";
import { applyToChild } from "./schema-propagation.js";
import { swapInUpload } from "./upload-installer.js";

/** The runtimes of the databases this process serves itself. */
export class LocalRuntimes implements DatabaseRuntimes {
  constructor(
    private readonly ports: {
      hosted: HostedDatabases;
      files: InstanceFiles;
    },
  ) {}

  async remove(location: string, dbId: string, keepFiles = false): Promise<void> {
    this.ports.hosted.remove(location, dbId, keepFiles);
  }

  async position(location: string, dbId: string): Promise<FramePosition> {
    return this.ports.hosted.at(this.ports.files.path(location, dbId)).frameLog.position();
  }

  applySchemaChange(child: DatabaseWithPlacement, change: SchemaChange): Promise<string | undefined> {
    return applyToChild(this.ports, child, change);
  }

  swapUpload(_dbId: string, path: string, file: string, name: string): Promise<void> {
    return swapInUpload(this.ports.hosted, path, file, name);
  }

  swapRestored(
    _dbId: string,
    dbPath: string,
    restored: string,
    next: { generation: number; index: number },
    name: string,
  ): Promise<boolean> {
    return swapInRestored(this.ports, dbPath, restored, next, name);
  }
}
