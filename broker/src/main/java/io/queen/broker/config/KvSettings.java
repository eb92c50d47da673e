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
 * @param guard          the refusal ladder's and the sweeper's settings
 */
public record KvSettings(int maxValueBytes, int maxKeyBytes, int maxOpsPerCall, int maxKeysPerCall,
                         long maxReadBytes, int prefixLimit, Guard guard) {

    /** The limits with the default guard. */
    public KvSettings(int maxValueBytes, int maxKeyBytes, int maxOpsPerCall, int maxKeysPerCall, long maxReadBytes,
                      int prefixLimit) {
        this(maxValueBytes, maxKeyBytes, maxOpsPerCall, maxKeysPerCall, maxReadBytes, prefixLimit,
                Guard.from(new Env(java.util.Map.of())));
    }

    /**
     * Grants, quotas, rates and the expiry sweep (broker/DESIGN.md, KV sweeper and quotas), under the
     * reference's names and defaults.
     *
     * @param requireGrant   QUEEN_KV_REQUIRE_GRANT (default QUEEN_TENANCY_HEADER): a tenant with no
     *                       queen.kv_quota row is refused feature_gated
     * @param readRate       QUEEN_KV_READ_RATE: KV calls that read, per second per tenant
     * @param readBurst      QUEEN_KV_READ_BURST
     * @param writeRate      QUEEN_KV_WRITE_RATE: KV calls that write, per second per tenant
     * @param writeBurst     QUEEN_KV_WRITE_BURST
     * @param cellRate       QUEEN_KV_CELL_RATE: KV calls per second on this broker, all tenants (0 off)
     * @param maxTenants     QUEEN_KV_MAX_TENANTS: tenants the quota poll keeps (and rate buckets held)
     * @param usageEveryMs   QUEEN_KV_USAGE_EVERY_MS: how often the sweeper measures usage
     * @param quotaRefreshMs QUEEN_KV_QUOTA_REFRESH_MS: how often every broker reads limits and usage
     * @param releasePercent QUEEN_KV_QUOTA_RELEASE_PERCENT (1..99): a blocked tenant is released once
     *                       measured under this share of its limit
     * @param hotPercent     QUEEN_KV_QUOTA_HOT_PERCENT: the share of a limit a tenant counts as hot at
     * @param expireEveryMs  QUEEN_KV_EXPIRE_EVERY_MS: the pause between expiry prunes
     * @param expireBatch    QUEEN_KV_EXPIRE_BATCH: rows one prune step deletes at most
     */
    public record Guard(boolean requireGrant, int readRate, int readBurst, int writeRate, int writeBurst,
                        int cellRate, int maxTenants, long usageEveryMs, long quotaRefreshMs, int releasePercent,
                        int hotPercent, long expireEveryMs, int expireBatch) {
        static Guard from(Env env) {
            return new Guard(
                    env.bool("QUEEN_KV_REQUIRE_GRANT", env.bool("QUEEN_TENANCY_HEADER", false)),
                    env.integer("QUEEN_KV_READ_RATE", 200, 1, 100_000_000),
                    env.integer("QUEEN_KV_READ_BURST", 400, 1, 1_000_000_000),
                    env.integer("QUEEN_KV_WRITE_RATE", 100, 1, 100_000_000),
                    env.integer("QUEEN_KV_WRITE_BURST", 200, 1, 1_000_000_000),
                    env.integer("QUEEN_KV_CELL_RATE", 2_000, 0, 100_000_000),
                    env.integer("QUEEN_KV_MAX_TENANTS", 10_000, 1, 10_000_000),
                    env.longValue("QUEEN_KV_USAGE_EVERY_MS", 300_000, 1_000, 86_400_000),
                    env.longValue("QUEEN_KV_QUOTA_REFRESH_MS", 30_000, 1_000, 86_400_000),
                    Math.clamp(env.integer("QUEEN_KV_QUOTA_RELEASE_PERCENT", 90, Integer.MIN_VALUE, Integer.MAX_VALUE), 1, 99),
                    Math.clamp(env.integer("QUEEN_KV_QUOTA_HOT_PERCENT", 80, Integer.MIN_VALUE, Integer.MAX_VALUE), 1, 100),
                    env.longValue("QUEEN_KV_EXPIRE_EVERY_MS", 1_000, 1, 3_600_000),
                    env.integer("QUEEN_KV_EXPIRE_BATCH", 1_000, 1, 100_000));
        }
    }

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
                Math.min(IN_WIRE_MAX_KEYS, maxKeysPerCall), maxReadBytes, prefixLimit, guard);
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
                env.integer("QUEEN_KV_PREFIX_LIMIT", 1_000, 1, 1_000),
                Guard.from(env));
    }
}
