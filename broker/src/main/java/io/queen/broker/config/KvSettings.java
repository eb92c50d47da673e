package io.queen.broker.config;

/**
 * The KV store's request limits (broker/DESIGN.md, KV store), under the reference broker's variable
 * names and with its defaults. The broker checks them before a connection is taken and passes them to
 * {@code queen.kv_apply_v1}, which checks them again for any other caller.
 *
 * @param maxValueBytes  QUEEN_KV_MAX_VALUE_BYTES: a value's serialized JSON, in bytes (413 beyond)
 * @param maxKeyBytes    QUEEN_KV_MAX_KEY_BYTES: a key's UTF-8 bytes; at most 512, the floor the SQL keeps
 *                       so the primary key's index entries stay small
 * @param maxOpsPerCall  QUEEN_KV_MAX_OPS_PER_CALL: operations in one call
 * @param maxKeysPerCall QUEEN_KV_MAX_KEYS_PER_CALL: keys in one call (a getMany counts its keys, a
 *                       getPrefix its clamped limit, any other operation one)
 * @param maxReadBytes   QUEEN_KV_MAX_READ_BYTES: value bytes the reads of one call may return; a read
 *                       past it is cut and says truncated
 * @param prefixLimit    QUEEN_KV_PREFIX_LIMIT: the most rows a getPrefix (or a console page) returns;
 *                       a larger limit is clamped to it, never refused
 */
public record KvSettings(int maxValueBytes, int maxKeyBytes, int maxOpsPerCall, int maxKeysPerCall,
                         long maxReadBytes, int prefixLimit) {

    /** The SQL's own ceiling on a key, in bytes (024_kv.sql, kv_check_names_v1). */
    public static final int KEY_BYTES_CEILING = 512;

    /** The reference's fixed budgets of a KV rider on POST /transaction, whatever the settings say. */
    public static final int IN_WIRE_MAX_OPS = 64;
    public static final int IN_WIRE_MAX_KEYS = 256;

    /**
     * These limits for a KV rider: at most 64 operations naming at most 256 keys, the transaction
     * holding the outermost lock space for as long as its reads take.
     */
    public KvSettings inWire() {
        return new KvSettings(maxValueBytes, maxKeyBytes, Math.min(IN_WIRE_MAX_OPS, maxOpsPerCall),
                Math.min(IN_WIRE_MAX_KEYS, maxKeysPerCall), maxReadBytes, prefixLimit);
    }

    public static KvSettings defaults() {
        return from(new Env(java.util.Map.of()));
    }

    static KvSettings from(Env env) {
        return new KvSettings(
                env.integer("QUEEN_KV_MAX_VALUE_BYTES", 65_536, 1, 64 * 1024 * 1024),
                env.integer("QUEEN_KV_MAX_KEY_BYTES", KEY_BYTES_CEILING, 1, KEY_BYTES_CEILING),
                env.integer("QUEEN_KV_MAX_OPS_PER_CALL", 256, 1, 10_000),
                env.integer("QUEEN_KV_MAX_KEYS_PER_CALL", 1_024, 1, 100_000),
                env.longValue("QUEEN_KV_MAX_READ_BYTES", 4L * 1024 * 1024, 1, 1024L * 1024 * 1024),
                env.integer("QUEEN_KV_PREFIX_LIMIT", 1_000, 1, 1_000));
    }
}
