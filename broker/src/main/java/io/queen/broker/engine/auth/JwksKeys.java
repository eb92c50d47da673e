package io.queen.broker.engine.auth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.crypto.Ed25519Verifier;
import com.nimbusds.jose.crypto.RSASSAVerifier;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.KeyUse;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.jwk.RSAKey;
import io.queen.broker.lifecycle.BackgroundThread;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.text.ParseException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Logger;

/**
 * The signing keys of a JWKS endpoint, by {@code kid}. Fetched once before the broker serves, again
 * every refresh interval on a background thread, and again when a token names a {@code kid} the set
 * lacks, at most once every {@link #MISS_REFETCH_GAP} (so a rotated key is picked up without a
 * restart, and a flood of unknown kids costs one fetch, not one each). A fetch that fails (endpoint
 * down, timeout, not a JWKS document) changes nothing: the last good keys stay in use.
 *
 * <p>As the reference reads them: {@code RSA} keys and {@code OKP} keys on Ed25519; any other entry
 * is skipped, as is a key marked {@code "use":"enc"}, which must not verify signatures. No redirect
 * is followed and a body over 1 MiB is refused.
 */
public final class JwksKeys implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(JwksKeys.class.getName());
    private static final ObjectMapper MAPPER = new ObjectMapper();
    /** The reference's throttle on the refetch an unknown kid triggers. */
    static final Duration MISS_REFETCH_GAP = Duration.ofSeconds(5);
    static final int MAX_BODY_BYTES = 1 << 20;

    /** One usable key and its verifier, built once. */
    record Key(String kid, JWK jwk, JWSVerifier verifier) {
        boolean rsa() {
            return jwk instanceof RSAKey;
        }
    }

    private final URI url;
    private final Duration timeout;
    private final Duration refreshInterval;
    private final InstantSource clock;
    private final HttpClient client;
    private final ReentrantLock fetching = new ReentrantLock();
    private final Runnable onChange;
    private volatile List<Key> keys = List.of();
    private volatile long lastAttemptMillis = Long.MIN_VALUE / 2;
    private volatile boolean closed;
    private Thread refresher;

    /** {@code onChange} runs after a fetch that changed the key set (the verified-token cache is dropped). */
    JwksKeys(URI url, Duration timeout, Duration refreshInterval, InstantSource clock, Runnable onChange) {
        this.url = url;
        this.timeout = timeout;
        this.refreshInterval = refreshInterval;
        this.clock = clock;
        this.onChange = onChange;
        this.client = HttpClient.newBuilder().connectTimeout(timeout).followRedirects(HttpClient.Redirect.NEVER).build();
    }

    /** The boot fetch (a failure is logged, not fatal: the first token pays the fetch) and the refresh loop. */
    void start() {
        if (fetch()) {
            LOG.info("JWKS pre-fetch OK: " + keys.size() + " usable key(s) from " + url);
        } else {
            LOG.warning("JWKS pre-fetch from " + url + " failed (will retry on demand and every "
                    + refreshInterval.toSeconds() + " s)");
        }
        refresher = BackgroundThread.start("queen-jwks-refresh", () -> {
            while (!closed && BackgroundThread.pause(refreshInterval.toMillis())) {
                if (!closed) {
                    fetch();
                }
            }
        });
    }

    /**
     * The key a token's {@code kid} names; with no kid, the first key of the document that suits the
     * algorithm's family (the reference takes a key of its set; a set of one is the case it is for).
     * An unknown kid triggers one refetch unless another ran less than {@link #MISS_REFETCH_GAP} ago.
     */
    Key lookup(String kid, boolean rsa) {
        Key k = find(kid, rsa);
        if (k != null) {
            return k;
        }
        if (clock.millis() - lastAttemptMillis >= MISS_REFETCH_GAP.toMillis()) {
            fetching.lock();
            try {
                // Whoever waited on the lock finds the fresh keys, or a fetch too recent to repeat.
                k = find(kid, rsa);
                if (k == null && clock.millis() - lastAttemptMillis >= MISS_REFETCH_GAP.toMillis()) {
                    fetchLocked();
                    k = find(kid, rsa);
                }
            } finally {
                fetching.unlock();
            }
        }
        return k;
    }

    private Key find(String kid, boolean rsa) {
        for (Key k : keys) {
            if (kid == null || kid.isEmpty() ? k.rsa() == rsa : kid.equals(k.kid())) {
                return k;
            }
        }
        return null;
    }

    /** True when the endpoint answered a JWKS document (which then replaced the keys). */
    boolean fetch() {
        fetching.lock();
        try {
            return fetchLocked();
        } finally {
            fetching.unlock();
        }
    }

    private boolean fetchLocked() {
        lastAttemptMillis = clock.millis();
        List<Key> fresh;
        try {
            fresh = parse(download());
        } catch (IOException | RuntimeException e) {
            LOG.warning("JWKS fetch from " + url + " failed, keeping the " + keys.size() + " key(s) in use: " + e.getMessage());
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        List<Key> before = keys;
        keys = fresh;
        if (!sameKeys(before, fresh)) {
            LOG.info("JWKS keys changed: " + fresh.size() + " usable key(s)");
            onChange.run();
        }
        return true;
    }

    private String download() throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(url).timeout(timeout).header("Accept", "application/json").GET().build();
        HttpResponse<InputStream> r = client.send(request, HttpResponse.BodyHandlers.ofInputStream());
        try (InputStream in = r.body()) {
            if (r.statusCode() != 200) {
                throw new IOException("HTTP " + r.statusCode());
            }
            byte[] body = in.readNBytes(MAX_BODY_BYTES + 1);
            if (body.length > MAX_BODY_BYTES) {
                throw new IOException("body over " + MAX_BODY_BYTES + " bytes");
            }
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    /** Each entry parsed on its own, so one odd key does not hide the good ones. */
    static List<Key> parse(String document) throws IOException {
        JsonNode entries = MAPPER.readTree(document).path("keys");
        if (!entries.isArray()) {
            throw new IOException("not a JWKS document (no keys array)");
        }
        List<Key> out = new ArrayList<>();
        for (JsonNode entry : entries) {
            try {
                JWK jwk = JWK.parse(entry.toString());
                if (KeyUse.ENCRYPTION.equals(jwk.getKeyUse())) {
                    continue;
                }
                if (jwk instanceof RSAKey rsa) {
                    out.add(new Key(jwk.getKeyID(), jwk, new RSASSAVerifier(rsa.toRSAPublicKey())));
                } else if (jwk instanceof OctetKeyPair okp && Curve.Ed25519.equals(okp.getCurve())) {
                    out.add(new Key(jwk.getKeyID(), jwk, new Ed25519Verifier(okp.toPublicJWK())));
                }
            } catch (ParseException | JOSEException e) {
                // Not a key we can verify with: skipped, as the reference does.
            }
        }
        return List.copyOf(out);
    }

    private static boolean sameKeys(List<Key> a, List<Key> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            if (!a.get(i).jwk().equals(b.get(i).jwk())) {
                return false;
            }
        }
        return true;
    }

    int size() {
        return keys.size();
    }

    @Override
    public void close() {
        closed = true;
        BackgroundThread.stop(refresher, Duration.ofSeconds(2), "a JWKS fetch");
        client.shutdownNow();
    }
}
