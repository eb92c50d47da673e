package io.queen.broker.store;

import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * JDBC of the timers (025_log_timers.sql): one procedure call per method, every value bound, JSON in
 * and out as text. The caller owns the transaction: the fire's hold, its writes and its settle share
 * one; every other call here is one statement in autocommit.
 */
public final class TimerStore {
    /** The stable identifiers the timer procedures raise as their message (timers_duplicate_key, ...). */
    private static final Pattern IDENTIFIER = Pattern.compile("timers_[a-z_]{1,60}");

    /** A claimed timer, as log_timers_claim_v1 hands it out. */
    public record Claimed(UUID tenant, String queue, String timerKey, String partition, String txn, UUID messageId,
                          byte[] payload, boolean payloadZstd, boolean encrypted, String producerSub, int attempts,
                          UUID token, long lateMs) {
    }

    /** A timer (queue, key) of one tenant, for the array arguments. */
    public record Key(String queue, String timerKey) {
    }

    private TimerStore() {
    }

    /** The answers of {@code log_timers_apply_v1} as JSON text, index-aligned with {@code opsJson}. */
    public static String apply(Connection c, UUID tenant, String opsJson, String producerSub) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_timers_apply_v1(?, ?::jsonb, ?)::text")) {
            ps.setObject(1, tenant);              // p_tenant
            ps.setString(2, opsJson);             // p_ops
            ps.setString(3, producerSub);         // p_producer_sub
            return single(ps);
        }
    }

    /** {@code {found, ...}} of one timer, as JSON text. */
    public static String get(Connection c, UUID tenant, String queue, String timerKey) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_timers_get_v1(?, ?, ?)::text")) {
            ps.setObject(1, tenant);              // p_tenant
            ps.setString(2, queue);               // p_queue
            ps.setString(3, timerKey);            // p_timer_key
            return single(ps);
        }
    }

    /** {@code {rows, truncated, nextAfter}}: one keyset page of a queue's timers, as JSON text. */
    public static String list(Connection c, UUID tenant, String queue, String after, Integer limit) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_timers_list_v1(?, ?, ?, ?)::text")) {
            ps.setObject(1, tenant);              // p_tenant
            ps.setString(2, queue);               // p_queue
            ps.setString(3, after);               // p_after
            if (limit == null) {                  // p_limit
                ps.setNull(4, java.sql.Types.INTEGER);
            } else {
                ps.setInt(4, limit);
            }
            return single(ps);
        }
    }

    /** {@code {queue, prefix, count}}: how many of a queue's timers have keys starting with {@code prefix}. */
    public static String count(Connection c, UUID tenant, String queue, String prefix) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_timers_count_v1(?, ?, ?)::text")) {
            ps.setObject(1, tenant);              // p_tenant
            ps.setString(2, queue);               // p_queue
            ps.setString(3, prefix);              // p_prefix
            return single(ps);
        }
    }

    /** The names among {@code queues} that exist for the tenant with encryption at rest on. */
    public static Set<String> encryptedQueues(Connection c, UUID tenant, List<String> queues) throws SQLException {
        Set<String> out = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT q.name FROM queen.queues q WHERE q.tenant_id = ? AND q.name = ANY (?) AND q.encryption_enabled")) {
            ps.setObject(1, tenant);
            ps.setArray(2, c.createArrayOf("text", queues.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getString(1));
                }
            }
        }
        return out;
    }

    /** Claims up to {@code maxRows} due timers for {@code leaseMs} (SKIP LOCKED), oldest due first. */
    public static List<Claimed> claim(Connection c, int startShard, int leaseMs, int maxRows) throws SQLException {
        List<Claimed> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT tenant_id, queue, timer_key, \"partition\", txn, message_id, payload, payload_zstd, encrypted,"
                        + " producer_sub, attempts, claim_token, late_ms FROM queen.log_timers_claim_v1(?, ?, ?)")) {
            ps.setInt(1, startShard);             // p_start_shard
            ps.setInt(2, leaseMs);                // p_lease_ms
            ps.setInt(3, maxRows);                // p_max_rows
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new Claimed(rs.getObject(1, UUID.class), rs.getString(2), rs.getString(3), rs.getString(4),
                            rs.getString(5), rs.getObject(6, UUID.class), rs.getBytes(7), rs.getBoolean(8),
                            rs.getBoolean(9), rs.getString(10), rs.getInt(11), rs.getObject(12, UUID.class),
                            rs.getLong(13)));
                }
            }
        }
        return out;
    }

    /** Locks (SKIP LOCKED) the named timers still under these tokens; the keys it holds. */
    public static Set<Key> hold(Connection c, UUID tenant, List<Key> keys, List<UUID> tokens) throws SQLException {
        Set<Key> out = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT queue, timer_key FROM queen.log_timers_hold_v1(?, ?, ?, ?)")) {
            ps.setObject(1, tenant);                                  // p_tenant
            ps.setArray(2, queues(c, keys));                          // p_queues
            ps.setArray(3, timerKeys(c, keys));                       // p_keys
            ps.setArray(4, c.createArrayOf("uuid", tokens.toArray())); // p_tokens
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new Key(rs.getString(1), rs.getString(2)));
                }
            }
        }
        return out;
    }

    /** Deletes the held timers that were delivered and releases the others at once. */
    public static void settle(Connection c, UUID tenant, List<Key> keys, List<Boolean> delivered) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_timers_settle_v1(?, ?, ?, ?)")) {
            ps.setObject(1, tenant);                                        // p_tenant
            ps.setArray(2, queues(c, keys));                                // p_queues
            ps.setArray(3, timerKeys(c, keys));                             // p_keys
            ps.setArray(4, c.createArrayOf("boolean", delivered.toArray())); // p_delivered
            ps.execute();
        }
    }

    /** Puts the timers still under these tokens into backoff; the keys that reached {@code maxAttempts}. */
    public static List<Key> fail(Connection c, UUID tenant, List<Key> keys, List<UUID> tokens, int backoffMs,
                                 String error, boolean countAttempt, int maxAttempts) throws SQLException {
        List<Key> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT queue, timer_key FROM queen.log_timers_fail_v1(?, ?, ?, ?, ?, ?, ?, ?)")) {
            ps.setObject(1, tenant);                                   // p_tenant
            ps.setArray(2, queues(c, keys));                           // p_queues
            ps.setArray(3, timerKeys(c, keys));                        // p_keys
            ps.setArray(4, c.createArrayOf("uuid", tokens.toArray())); // p_tokens
            ps.setInt(5, backoffMs);                                   // p_backoff_ms
            ps.setString(6, error);                                    // p_error
            ps.setBoolean(7, countAttempt);                            // p_count_attempt
            ps.setInt(8, maxAttempts);                                 // p_max_attempts
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new Key(rs.getString(1), rs.getString(2)));
                }
            }
        }
        return out;
    }

    /** Archives an exhausted timer into its queue's DLQ (group __timer__); false when it no longer qualifies. */
    public static boolean dlq(Connection c, UUID tenant, Key key, String payloadJson, int minAttempts)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_timers_dlq_v1(?, ?, ?, ?::jsonb, ?)")) {
            ps.setObject(1, tenant);              // p_tenant
            ps.setString(2, key.queue());         // p_queue
            ps.setString(3, key.timerKey());      // p_timer_key
            ps.setString(4, payloadJson);         // p_payload
            ps.setInt(5, minAttempts);            // p_min_attempts
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }

    /** Milliseconds until the earliest timer is visible to a claim (0: due now), null when there is none. */
    public static Long dueInMs(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT queen.log_timers_due_v1()");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            long v = rs.getLong(1);
            return rs.wasNull() ? null : v;
        }
    }

    /** The due timers' sample (025 log_timers_lag_v1): visible and due (a floor when capped), the oldest's lateness. */
    public record Lag(long due, boolean capped, long oldestLateMs) {
    }

    public static Lag lag(Connection c, int cap) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT due, capped, oldest_late_ms FROM queen.log_timers_lag_v1(?)")) {
            ps.setInt(1, cap); // p_cap
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new Lag(rs.getLong(1), rs.getBoolean(2), rs.getLong(3));
            }
        }
    }

    /** The procedure's own identifier when {@code e} is a refusal it raised (22023), else null. */
    public static String refusal(SQLException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof PSQLException p && p.getServerErrorMessage() != null) {
                ServerErrorMessage m = p.getServerErrorMessage();
                String message = m.getMessage();
                return SqlStates.INVALID_PARAMETER_VALUE.equals(m.getSQLState()) && message != null
                        && IDENTIFIER.matcher(message).matches() ? message : null;
            }
        }
        return null;
    }

    private static Array queues(Connection c, List<Key> keys) throws SQLException {
        return c.createArrayOf("text", keys.stream().map(Key::queue).toArray());
    }

    private static Array timerKeys(Connection c, List<Key> keys) throws SQLException {
        return c.createArrayOf("text", keys.stream().map(Key::timerKey).toArray());
    }

    private static String single(PreparedStatement ps) throws SQLException {
        try (ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) {
                throw new SQLException("a timer procedure returned no row");
            }
            return rs.getString(1);
        }
    }
}
