package io.queen.broker.engine.auth;

import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Tokens already verified, each until its own expiry, so a client sending the same token on every
 * push pays the signature check once. The key is the whole token text, signature included, so only
 * the exact bytes that verified can hit. An entry without {@code exp} is kept at most
 * {@link #MAX_HOLD}; every entry goes when the JWKS keys change (a removed key must stop
 * verifying). Only successes are kept: a refused token is checked again, which costs little
 * since the cheap checks come first, and keeps strangers' garbage out of the memory.
 *
 * <p>Bounded at {@link #MAX_ENTRIES}: at the bound the expired entries are swept, and if that
 * frees nothing the map is cleared whole (entries are cheap to make again).
 */
final class VerifiedTokens {
    static final int MAX_ENTRIES = 10_000;
    static final java.time.Duration MAX_HOLD = java.time.Duration.ofHours(1);

    private record Entry(Identity identity, Instant until) {
    }

    private final Map<String, Entry> entries = new ConcurrentHashMap<>();

    /** The identity of a token verified before and still valid at {@code now}, else null. */
    Identity get(String token, Instant now) {
        Entry e = entries.get(token);
        if (e == null) {
            return null;
        }
        if (now.isAfter(e.until())) {
            entries.remove(token, e);
            return null;
        }
        return e.identity();
    }

    void put(String token, TokenVerifier.Verified v, Instant now) {
        Instant cap = now.plus(MAX_HOLD);
        Instant until = v.validUntil() == null || v.validUntil().isAfter(cap) ? cap : v.validUntil();
        if (entries.size() >= MAX_ENTRIES) {
            entries.values().removeIf(e -> now.isAfter(e.until()));
            if (entries.size() >= MAX_ENTRIES) {
                entries.clear();
            }
        }
        entries.put(token, new Entry(v.identity(), until));
    }

    void clear() {
        entries.clear();
    }

    int size() {
        return entries.size();
    }
}
