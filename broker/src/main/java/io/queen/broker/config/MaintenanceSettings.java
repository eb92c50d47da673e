package io.queen.broker.config;

import java.nio.file.Path;

/**
 * The push spool and the maintenance switches (broker/DESIGN.md, Push spool), under the reference
 * broker's variable names.
 *
 * @param spoolDir             FILE_BUFFER_DIR: node-local folder of the push spool; created on first use
 * @param spoolFlushMs         FILE_BUFFER_FLUSH_MS: idle period of the spool drain loop
 * @param spoolMaxBatch        FILE_BUFFER_MAX_BATCH: spooled items replayed per push call
 * @param spoolEventsPerFile   FILE_BUFFER_EVENTS_PER_FILE: items per spool file before it rotates
 * @param switchesRefreshMs    QUEEN_SWITCHES_REFRESH_MS (ours, not the reference's): how often each broker
 *                             re-reads the flags from queen.system_state; the reference pushes flips to its
 *                             peers over the mesh instead, which this broker does not have
 */
public record MaintenanceSettings(Path spoolDir, long spoolFlushMs, int spoolMaxBatch, int spoolEventsPerFile,
                                  long switchesRefreshMs) {

    public static final String DEFAULT_SPOOL_DIR = "/var/lib/queen/buffers";

    public static MaintenanceSettings from(Env env) {
        String dir = env.string("FILE_BUFFER_DIR", DEFAULT_SPOOL_DIR).trim();
        if (dir.isEmpty()) {
            throw Env.invalid("FILE_BUFFER_DIR", dir, "a folder path is required");
        }
        return new MaintenanceSettings(Path.of(dir),
                env.longValue("FILE_BUFFER_FLUSH_MS", 100, 1, 60_000),
                env.integer("FILE_BUFFER_MAX_BATCH", 100, 1, 100_000),
                env.integer("FILE_BUFFER_EVENTS_PER_FILE", 10_000, 1, 10_000_000),
                env.longValue("QUEEN_SWITCHES_REFRESH_MS", 1_000, 10, 3_600_000));
    }
}
