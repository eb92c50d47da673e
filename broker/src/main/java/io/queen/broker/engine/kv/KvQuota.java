package io.queen.broker.engine.kv;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.broker.config.KvSettings;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The grant and occupancy rungs of the KV refusal ladder (broker/DESIGN.md, KV sweeper and quotas),
 * decided in memory from the last quota poll ({@code queen.kv_quota_refresh_v1}): no request reads
 * or locks a quota row, since a per-tenant counter every write updated would sit in the outermost
 * lock space for the length of every transaction. What this broker wrote since the measurement it
 * adopted is added to it, so a block applies at once; only a new measurement under the release share
 * of the limit lifts it, so a tenant at its limit does not flap in and out.
 */
public final class KvQuota {
    /** What the poll said of one tenant; a null limit is unlimited. */
    public record Limits(boolean granted, boolean enabled, Long maxRows, Long maxBytes, Integer maxReadsPerSec,
                         Integer maxWritesPerSec, long kvRows, long kvBytes, long computedAtMs, Long maxTimers,
                         Long maxHorizonS, long timerRows) {
        /** A tenant's KV limits with no timer limit and no timers measured. */
        public Limits(boolean granted, boolean enabled, Long maxRows, Long maxBytes, Integer maxReadsPerSec,
                      Integer maxWritesPerSec, long kvRows, long kvBytes, long computedAtMs) {
            this(granted, enabled, maxRows, maxBytes, maxReadsPerSec, maxWritesPerSec, kvRows, kvBytes, computedAtMs,
                    null, null, 0);
        }
    }

    /** Which rung refused. */
    public enum Refusal { FEATURE_GATED, QUOTA_EXCEEDED }

    private final KvSettings.Guard guard;
    private volatile Map<UUID, Limits> tenants = Map.of();
    private volatile long refreshedAtMs;
    private final Set<UUID> blocked = ConcurrentHashMap.newKeySet();
    private final Map<UUID, AtomicLong[]> grown = new ConcurrentHashMap<>();
    /** The timers' occupancy rung, kept apart: a tenant full of timers may still write keys, and back. */
    private final Set<UUID> blockedTimers = ConcurrentHashMap.newKeySet();
    private final Map<UUID, AtomicLong> scheduled = new ConcurrentHashMap<>();

    public KvQuota(KvSettings.Guard guard) {
        this.guard = guard;
    }

    /** Adopts a poll's answer (the JSON array of kv_quota_refresh_v1). */
    public void adopt(JsonNode answer, long nowMs) {
        Map<UUID, Limits> fresh = new HashMap<>();
        for (JsonNode t : answer) {
            UUID id;
            try {
                id = UUID.fromString(t.path("tenant").asText());
            } catch (IllegalArgumentException e) {
                continue;
            }
            fresh.put(id, new Limits(t.path("granted").asBoolean(), t.path("enabled").asBoolean(true),
                    longOrNull(t.get("maxRows")), longOrNull(t.get("maxBytes")), intOrNull(t.get("maxReadsPerSec")),
                    intOrNull(t.get("maxWritesPerSec")), t.path("kvRows").asLong(), t.path("kvBytes").asLong(),
                    t.path("computedAtMs").asLong(), longOrNull(t.get("maxTimers")), longOrNull(t.get("maxHorizonS")),
                    t.path("timerRows").asLong()));
        }
        Map<UUID, Limits> before = tenants;
        for (Map.Entry<UUID, Limits> e : fresh.entrySet()) {
            Limits now = e.getValue();
            Limits was = before.get(e.getKey());
            if (was != null && was.computedAtMs() == now.computedAtMs()) {
                continue;
            }
            // A new measurement: it counts what this broker wrote, so the local delta starts over.
            grown.remove(e.getKey());
            scheduled.remove(e.getKey());
            if (over(now, 0, 0, 100)) {
                blocked.add(e.getKey());
            } else if (!over(now, 0, 0, guard.releasePercent())) {
                blocked.remove(e.getKey());
            }
            if (overTimers(now, 0, 100)) {
                blockedTimers.add(e.getKey());
            } else if (!overTimers(now, 0, guard.releasePercent())) {
                blockedTimers.remove(e.getKey());
            }
        }
        blocked.retainAll(fresh.keySet());
        grown.keySet().retainAll(fresh.keySet());
        blockedTimers.retainAll(fresh.keySet());
        scheduled.keySet().retainAll(fresh.keySet());
        tenants = Map.copyOf(fresh);
        refreshedAtMs = nowMs;
    }

    /**
     * The grant rung then the occupancy rung for one call; null admits it. {@code grows}: the call may
     * add rows or bytes (a put or an incr); reads and deletes are never refused for occupancy, since a
     * tenant that cannot delete cannot get back under its limit.
     */
    public Refusal check(UUID tenant, boolean grows) {
        Limits t = tenants.get(tenant);
        if (notGranted(t)) {
            return Refusal.FEATURE_GATED;
        }
        if (!grows || t == null) {
            return null;
        }
        if (blocked.contains(tenant)) {
            return Refusal.QUOTA_EXCEEDED;
        }
        AtomicLong[] d = grown.get(tenant);
        if (over(t, d == null ? 0 : d[0].get(), d == null ? 0 : d[1].get(), 100)) {
            blocked.add(tenant);
            return Refusal.QUOTA_EXCEEDED;
        }
        return null;
    }

    /**
     * The grant rung then the timers' occupancy rung for a call that schedules (a cancel or a read is
     * never refused: a tenant that cannot cancel cannot get back under its limit); null admits it.
     * {@code schedules}: the call's schedule operations, all of which must fit under the limit.
     * A reschedule counts as a schedule, as in the reference: at schedule time the two are one upsert.
     */
    public Refusal checkTimers(UUID tenant, int schedules) {
        Limits t = tenants.get(tenant);
        if (notGranted(t)) {
            return Refusal.FEATURE_GATED;
        }
        if (t == null || t.maxTimers() == null) {
            return null;
        }
        if (blockedTimers.contains(tenant)) {
            return Refusal.QUOTA_EXCEEDED;
        }
        AtomicLong d = scheduled.get(tenant);
        long held = t.timerRows() + (d == null ? 0 : d.get());
        if (held >= t.maxTimers()) {
            blockedTimers.add(tenant);
            return Refusal.QUOTA_EXCEEDED;
        }
        if (held + schedules > t.maxTimers()) {
            // Room for some, not for the whole call: refused, but the tenant is not full.
            return Refusal.QUOTA_EXCEEDED;
        }
        return null;
    }

    /** After a call that scheduled {@code timers} (an upper bound: a reschedule adds no row). */
    public void scheduled(UUID tenant, long timers) {
        if (timers <= 0 || !tenants.containsKey(tenant)) {
            return;
        }
        scheduled.computeIfAbsent(tenant, k -> new AtomicLong()).addAndGet(timers);
    }

    /** The horizon in force for the tenant: the cell's, narrowed (never widened) by its quota row. */
    public long horizonSeconds(UUID tenant, long cellSeconds) {
        Limits t = tenants.get(tenant);
        Long own = t == null ? null : t.maxHorizonS();
        return own == null || own <= 0 ? cellSeconds : Math.min(cellSeconds, own);
    }

    /** After a call that wrote: at most {@code rows} new rows and {@code bytes} value bytes. */
    public void wrote(UUID tenant, long rows, long bytes) {
        if (rows <= 0 && bytes <= 0 || !tenants.containsKey(tenant)) {
            return;
        }
        AtomicLong[] d = grown.computeIfAbsent(tenant, k -> new AtomicLong[] {new AtomicLong(), new AtomicLong()});
        d[0].addAndGet(rows);
        d[1].addAndGet(bytes);
    }

    /** The tenant's own rate ceilings, when its quota row sets them (null otherwise). */
    public Limits limits(UUID tenant) {
        return tenants.get(tenant);
    }

    /** Tenants the last poll listed, and when it ran (0: never), for the system switch's view. */
    public int tenantCount() {
        return tenants.size();
    }

    public long refreshedAtMs() {
        return refreshedAtMs;
    }

    /** Tenants at or above the hot share of a limit. */
    public long hot() {
        return tenants.values().stream().filter(t -> over(t, 0, 0, guard.hotPercent())
                || overTimers(t, 0, guard.hotPercent())).count();
    }

    private static boolean over(Limits t, long rows, long bytes, int percent) {
        return (t.maxRows() != null && (t.kvRows() + rows) * 100 >= t.maxRows() * percent)
                || (t.maxBytes() != null && (t.kvBytes() + bytes) * 100 >= t.maxBytes() * percent);
    }

    /** The grant rung, the same for KV and timers: no row while a grant is required, or a disabled row. */
    private boolean notGranted(Limits t) {
        return (guard.requireGrant() && (t == null || !t.granted())) || (t != null && !t.enabled());
    }

    private static boolean overTimers(Limits t, long timers, int percent) {
        return t.maxTimers() != null && (t.timerRows() + timers) * 100 >= t.maxTimers() * percent;
    }

    private static Long longOrNull(JsonNode v) {
        return v == null || v.isNull() ? null : v.asLong();
    }

    private static Integer intOrNull(JsonNode v) {
        return v == null || v.isNull() ? null : v.asInt();
    }
}
