package io.queen.operator;

import io.queen.operator.brokerclient.CredentialSettings;
import io.queen.operator.brokerclient.Tokens;
import io.queen.operator.reconcile.ReconcileTimings;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Every setting the operator reads, validated once at start: a bad value stops the start with a
 * message naming the variable. Durations are written {@code 30s}, {@code 5m}, {@code 1h} or ISO-8601.
 *
 * @param watchNamespaces empty for all namespaces; otherwise the namespaces to watch
 * @param useSsa          server-side apply for primary resources; on in production, off only against
 *                        the fabric8 mock API server, which does not support it
 * @param evictPods       replace brokers through the eviction API (the PodDisruptionBudget applies); on in
 *                        production, off only against the fabric8 mock API server, which has no eviction
 * @param rolloutNamespace where broker StatefulSets are rolled ({@code ROLLOUT_NAMESPACE}, the release
 *                        namespace in the chart); null rolls them in the watched namespaces
 * @param leaseIdentity   who holds the leader Lease: {@code LEADER_ELECTION_IDENTITY}, else the pod name
 *                        ({@code HOSTNAME}); null lets JOSDK pick a random one. Two replicas must differ.
 * @param credentials     how the operator authenticates to the broker (none, a token, a token file, or
 *                        admin tokens it signs itself); see {@link #credentials(Map)}
 * @param brokerCaFile    with an https {@code brokerUrl}: the PEM CA certificates the broker's certificate
 *                        must chain to ({@code QUEEN_BROKER_CA_FILE}, re-read when it changes); null for the
 *                        JDK's default trust store
 */
public record OperatorSettings(
        URI brokerUrl,
        Duration brokerTimeout,
        Set<String> watchNamespaces,
        boolean useSsa,
        boolean leaderElection,
        String leaseName,
        String leaseNamespace,
        int httpPort,
        ReconcileTimings timings,
        boolean rolloutEnabled,
        Duration rolloutReadyTimeout,
        Duration rolloutPoll,
        boolean evictPods,
        String rolloutNamespace,
        String leaseIdentity,
        CredentialSettings credentials,
        Path brokerCaFile) {

    public static OperatorSettings fromEnvironment() {
        return from(System.getenv());
    }

    public static OperatorSettings from(Map<String, String> env) {
        URI brokerUrl = uri(env, "QUEEN_BROKER_URL", "http://queen-broker:6632");
        String namespaces = env.getOrDefault("WATCH_NAMESPACES", "").trim();
        Set<String> watch = namespaces.isEmpty() ? Set.of()
                : Arrays.stream(namespaces.split(",")).map(String::trim).filter(s -> !s.isEmpty()).collect(Collectors.toSet());
        ReconcileTimings timings = new ReconcileTimings(
                duration(env, "RECHECK_INTERVAL", "30s"),
                duration(env, "PURGE_STEP_INTERVAL", "1s"),
                duration(env, "BROKER_GIVE_UP_AFTER", "10m"),
                duration(env, "RESYNC_INTERVAL", "5m"));
        return new OperatorSettings(brokerUrl, duration(env, "QUEEN_BROKER_TIMEOUT", "10s"), watch,
                bool(env, "USE_SSA", true), bool(env, "LEADER_ELECTION", true),
                env.getOrDefault("LEADER_ELECTION_LEASE_NAME", "queen-operator"),
                blankToNull(env.get("LEADER_ELECTION_NAMESPACE")),
                integer(env, "OPERATOR_HTTP_PORT", 8080, 0, 65535),
                timings, bool(env, "ROLLOUT_ENABLED", true),
                duration(env, "ROLL_READY_TIMEOUT", "5m"), duration(env, "ROLL_POLL_INTERVAL", "5s"),
                bool(env, "ROLLOUT_EVICT_PODS", true), blankToNull(env.get("ROLLOUT_NAMESPACE")),
                blankToNull(env.getOrDefault("LEADER_ELECTION_IDENTITY", env.get("HOSTNAME"))),
                credentials(env), caFile(env, brokerUrl));
    }

    /** Only with https: a CA for a plain-HTTP URL would look like TLS while nothing is encrypted. */
    static Path caFile(Map<String, String> env, URI brokerUrl) {
        String file = blankToNull(env.get("QUEEN_BROKER_CA_FILE"));
        if (file == null) {
            return null;
        }
        if (!"https".equals(brokerUrl.getScheme())) {
            throw new IllegalArgumentException("QUEEN_BROKER_CA_FILE is set but QUEEN_BROKER_URL " + brokerUrl
                    + " is plain HTTP: use an https URL for a broker with TLS, or unset QUEEN_BROKER_CA_FILE");
        }
        return Path.of(file);
    }

    /**
     * At most one of {@code QUEEN_OPERATOR_TOKEN_FILE} (a mounted Secret, re-read on every call),
     * {@code QUEEN_OPERATOR_TOKEN}, or {@code QUEEN_OPERATOR_JWT_SECRET} (sign admin tokens with the
     * broker's HMAC secret: {@code QUEEN_OPERATOR_JWT_ALGORITHM} HS256/HS384/HS512,
     * {@code QUEEN_OPERATOR_JWT_ISSUER}, {@code QUEEN_OPERATOR_JWT_AUDIENCE},
     * {@code QUEEN_OPERATOR_JWT_ROLES_CLAIM} (role), {@code QUEEN_OPERATOR_JWT_ROLE} (admin),
     * {@code QUEEN_OPERATOR_TOKEN_LIFETIME} (10m)). None: no credentials. Blank counts as unset.
     */
    static CredentialSettings credentials(Map<String, String> env) {
        boolean allowInsecure = bool(env, "QUEEN_OPERATOR_ALLOW_INSECURE_CREDENTIALS", false);
        String file = blankToNull(env.get("QUEEN_OPERATOR_TOKEN_FILE"));
        String token = env.get("QUEEN_OPERATOR_TOKEN");
        token = token == null || token.isBlank() ? null : token;
        String secret = env.get("QUEEN_OPERATOR_JWT_SECRET");
        secret = secret == null || secret.isEmpty() ? null : secret;
        int sources = (file == null ? 0 : 1) + (token == null ? 0 : 1) + (secret == null ? 0 : 1);
        if (sources > 1) {
            throw new IllegalArgumentException("QUEEN_OPERATOR_TOKEN_FILE, QUEEN_OPERATOR_TOKEN and"
                    + " QUEEN_OPERATOR_JWT_SECRET are alternatives: set one of them, not " + sources);
        }
        if (file != null) {
            return new CredentialSettings(CredentialSettings.Source.TOKEN_FILE, null, Path.of(file), null, allowInsecure);
        }
        if (token != null) {
            return new CredentialSettings(CredentialSettings.Source.TOKEN, Tokens.clean(token, "QUEEN_OPERATOR_TOKEN"),
                    null, null, allowInsecure);
        }
        if (secret == null) {
            return new CredentialSettings(CredentialSettings.Source.NONE, null, null, null, allowInsecure);
        }
        String algorithm = env.getOrDefault("QUEEN_OPERATOR_JWT_ALGORITHM", "HS256").trim().toUpperCase(Locale.ROOT);
        int minimum = switch (algorithm) {
            case "HS256" -> 32;
            case "HS384" -> 48;
            case "HS512" -> 64;
            default -> throw invalid("QUEEN_OPERATOR_JWT_ALGORITHM", algorithm,
                    "HS256, HS384 or HS512 (the operator signs with the broker's HMAC secret)");
        };
        byte[] key = secret.getBytes(StandardCharsets.UTF_8);
        if (key.length < minimum) {
            // The value itself is never repeated: it is a secret.
            throw new IllegalArgumentException("QUEEN_OPERATOR_JWT_SECRET is " + key.length + " bytes; " + algorithm
                    + " needs at least " + minimum + " (the broker refuses shorter keys too)");
        }
        Duration lifetime = duration(env, "QUEEN_OPERATOR_TOKEN_LIFETIME", "10m");
        if (lifetime.compareTo(Duration.ofMinutes(1)) < 0 || lifetime.compareTo(Duration.ofHours(24)) > 0) {
            throw invalid("QUEEN_OPERATOR_TOKEN_LIFETIME", env.get("QUEEN_OPERATOR_TOKEN_LIFETIME"), "between 1m and 24h");
        }
        return new CredentialSettings(CredentialSettings.Source.SIGNED, null, null,
                new CredentialSettings.Signing(algorithm, key, blankToNull(env.get("QUEEN_OPERATOR_JWT_ISSUER")),
                        blankToNull(env.get("QUEEN_OPERATOR_JWT_AUDIENCE")),
                        word(env, "QUEEN_OPERATOR_JWT_ROLES_CLAIM", "role"), word(env, "QUEEN_OPERATOR_JWT_ROLE", "admin"),
                        lifetime),
                allowInsecure);
    }

    static Duration duration(Map<String, String> env, String name, String fallback) {
        String raw = env.getOrDefault(name, fallback).trim();
        try {
            Duration d;
            if (raw.startsWith("P") || raw.startsWith("p")) {
                d = Duration.parse(raw);
            } else {
                String lower = raw.toLowerCase(Locale.ROOT);
                long amount = Long.parseLong(lower.substring(0, lower.length() - (lower.endsWith("ms") ? 2 : 1)));
                d = lower.endsWith("ms") ? Duration.ofMillis(amount)
                        : switch (lower.charAt(lower.length() - 1)) {
                            case 's' -> Duration.ofSeconds(amount);
                            case 'm' -> Duration.ofMinutes(amount);
                            case 'h' -> Duration.ofHours(amount);
                            default -> throw new IllegalArgumentException();
                        };
            }
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException();
            }
            return d;
        } catch (RuntimeException e) {
            throw invalid(name, raw, "a positive duration such as 30s, 5m, 1h or PT5M");
        }
    }

    private static String word(Map<String, String> env, String name, String fallback) {
        String raw = env.get(name);
        return raw == null || raw.isBlank() ? fallback : raw.trim();
    }

    private static boolean bool(Map<String, String> env, String name, boolean fallback) {
        String raw = env.get(name);
        if (raw == null || raw.isBlank()) {
            return fallback;
        }
        return switch (raw.trim().toLowerCase(Locale.ROOT)) {
            case "true", "1", "yes" -> true;
            case "false", "0", "no" -> false;
            default -> throw invalid(name, raw, "true or false");
        };
    }

    private static int integer(Map<String, String> env, String name, int fallback, int min, int max) {
        String raw = env.get(name);
        if (raw == null || raw.isBlank()) {
            return fallback;
        }
        try {
            int value = Integer.parseInt(raw.trim());
            if (value < min || value > max) {
                throw new NumberFormatException();
            }
            return value;
        } catch (NumberFormatException e) {
            throw invalid(name, raw, "an integer in " + min + ".." + max);
        }
    }

    private static URI uri(Map<String, String> env, String name, String fallback) {
        String raw = env.getOrDefault(name, fallback).trim();
        try {
            URI uri = URI.create(raw.endsWith("/") ? raw : raw + "/");
            if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme()) || uri.getHost() == null) {
                throw new IllegalArgumentException();
            }
            return uri;
        } catch (IllegalArgumentException e) {
            throw invalid(name, raw, "an http(s) URL such as http://queen-broker:6632");
        }
    }

    private static String blankToNull(String value) {
        return value == null || value.isBlank() ? null : value.trim();
    }

    private static IllegalArgumentException invalid(String name, String value, String expected) {
        return new IllegalArgumentException(name + "=\"" + value + "\" is invalid: expected " + expected);
    }
}
