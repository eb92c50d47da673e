package io.queen.broker.config;

import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.interfaces.EdECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.X509EncodedKeySpec;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.logging.Logger;

/**
 * JWT authentication (broker/DESIGN.md, Authentication), with the reference broker's variables
 * and defaults. Off by default, and then nothing else is read: a disabled broker is the broker it
 * was before authentication existed.
 *
 * <p>On, every combination that could never let a token through, or that leaves it unclear which
 * key governs, stops the boot naming the variable:
 * <ul>
 *   <li>a {@code JWT_ALGORITHM} outside the supported set;</li>
 *   <li>an HS setting without {@code JWT_SECRET}, an RS or EdDSA setting with neither
 *       {@code JWT_PUBLIC_KEY} nor {@code JWT_JWKS_URL}, {@code auto} with none of the three;</li>
 *   <li>{@code JWT_PUBLIC_KEY} together with {@code JWT_JWKS_URL} (the reference silently prefers
 *       the PEM; here the operator says which one is meant);</li>
 *   <li>a {@code JWT_PUBLIC_KEY} that is not a SubjectPublicKeyInfo PEM of an RSA or Ed25519 key,
 *       or whose key type the pinned algorithm cannot use;</li>
 *   <li>a {@code JWT_SECRET} shorter than RFC 7518 section 3.2 allows for the HS algorithms taken
 *       (32 bytes for HS256, 48 for HS384, 64 for HS512): the verifier refuses such keys, so the
 *       broker would boot and then refuse every token;</li>
 *   <li>two role variables naming the same role, or a {@code JWT_JWKS_URL} that is not an absolute
 *       http(s) URL.</li>
 * </ul>
 * The reference boots on the short secret, the HS setting without a secret and the PEM plus JWKS
 * pair, and fails every request instead; these checks only move that failure to the boot.
 *
 * @param secret          the HMAC key's bytes (UTF-8 of {@code JWT_SECRET}), null when unset
 * @param publicKey       the parsed {@code JWT_PUBLIC_KEY}, null when unset
 * @param jwksUrl         {@code JWT_JWKS_URL}, null when unset
 * @param issuer          {@code JWT_ISSUER}, null when unset (then not checked)
 * @param audience        {@code JWT_AUDIENCE}, null when unset (then not checked)
 * @param skipPaths       {@code JWT_SKIP_PATHS}: exact paths, or prefixes for entries ending in {@code /}
 */
public record AuthSettings(
        boolean enabled,
        JwtAlgorithm algorithm,
        byte[] secret,
        PublicKey publicKey,
        URI jwksUrl,
        Duration jwksRefreshInterval,
        Duration jwksTimeout,
        String issuer,
        String audience,
        Duration clockSkew,
        List<String> skipPaths,
        String rolesClaim,
        String rolesArrayClaim,
        RoleNames roles) {

    private static final Logger LOG = Logger.getLogger(AuthSettings.class.getName());
    static final String DEFAULT_SKIP_PATHS = "/health,/metrics/prometheus,/metrics,/";

    /** The role values that mean each access level, as the token carries them. */
    public record RoleNames(String admin, String readWrite, String readOnly, String writeOnly) {
        public static final RoleNames DEFAULTS = new RoleNames("admin", "read-write", "read-only", "write-only");
    }

    /** Authentication off: every request passes, no identity is attached. */
    public static final AuthSettings DISABLED = new AuthSettings(false, JwtAlgorithm.HS256, null, null, null,
            Duration.ofHours(1), Duration.ofSeconds(5), null, null, Duration.ofSeconds(30),
            splitPaths(DEFAULT_SKIP_PATHS), "role", "roles", RoleNames.DEFAULTS);

    public AuthSettings {
        skipPaths = List.copyOf(skipPaths);
    }

    public static AuthSettings from(Env env) {
        if (!env.bool("JWT_ENABLED", false)) {
            return DISABLED;
        }
        JwtAlgorithm algorithm = JwtAlgorithm.parse(env.string("JWT_ALGORITHM", "HS256"));
        String secretText = env.raw("JWT_SECRET");
        byte[] secret = secretText == null ? null : secretText.getBytes(StandardCharsets.UTF_8);
        String pem = env.raw("JWT_PUBLIC_KEY");
        URI jwks = jwksUrl(env.raw("JWT_JWKS_URL"));
        if (pem != null && jwks != null) {
            throw new ConfigException("JWT_PUBLIC_KEY and JWT_JWKS_URL are both set: set one of them"
                    + " (a static key, or keys fetched by kid)");
        }
        PublicKey publicKey = pem == null ? null : publicKey(pem, algorithm);
        requireKeyMaterial(algorithm, secret, publicKey, jwks);
        if (secret != null) {
            checkSecret(algorithm, secret);
        }
        RoleNames roles = new RoleNames(
                env.string("JWT_ROLE_ADMIN", "admin"),
                env.string("JWT_ROLE_READ_WRITE", "read-write"),
                env.string("JWT_ROLE_READ_ONLY", "read-only"),
                env.string("JWT_ROLE_WRITE_ONLY", "write-only"));
        distinctRoles(roles);
        return new AuthSettings(true, algorithm, secret, publicKey, jwks,
                Duration.ofSeconds(env.longValue("JWT_JWKS_REFRESH_INTERVAL", 3600, 1, 31L * 24 * 3600)),
                Duration.ofMillis(env.longValue("JWT_JWKS_TIMEOUT_MS", 5000, 1, 300_000)),
                env.raw("JWT_ISSUER"),
                env.raw("JWT_AUDIENCE"),
                Duration.ofSeconds(env.longValue("JWT_CLOCK_SKEW", 30, 0, 86_400)),
                splitPaths(env.string("JWT_SKIP_PATHS", DEFAULT_SKIP_PATHS)),
                env.string("JWT_ROLES_CLAIM", "role"),
                env.string("JWT_ROLES_ARRAY_CLAIM", "roles"),
                roles);
    }

    /**
     * True when {@code path} skips authentication: an exact entry, or an entry longer than one
     * character that ends in {@code /} and prefixes it (so {@code /} alone skips only the root).
     */
    public boolean skips(String path) {
        for (String skip : skipPaths) {
            if (path.equals(skip) || (skip.length() > 1 && skip.endsWith("/") && path.startsWith(skip))) {
                return true;
            }
        }
        return false;
    }

    static List<String> splitPaths(String raw) {
        List<String> out = new ArrayList<>();
        for (String p : raw.split(",")) {
            if (!p.trim().isEmpty()) {
                out.add(p.trim());
            }
        }
        return out;
    }

    private static void requireKeyMaterial(JwtAlgorithm a, byte[] secret, PublicKey key, URI jwks) {
        boolean asymmetric = key != null || jwks != null;
        switch (a.family()) {
            case HMAC -> {
                if (secret == null) {
                    throw new ConfigException("JWT_ENABLED=true with JWT_ALGORITHM=" + a.spelling()
                            + " needs JWT_SECRET" + (asymmetric ? " (JWT_PUBLIC_KEY and JWT_JWKS_URL verify only"
                            + " RS256/RS384/RS512/EdDSA tokens: use JWT_ALGORITHM=auto or an RS/EdDSA value)" : ""));
                }
                if (asymmetric) {
                    LOG.warning("JWT_ALGORITHM=" + a.spelling() + " accepts HS tokens only: JWT_PUBLIC_KEY/"
                            + "JWT_JWKS_URL are not used");
                }
            }
            case RSA, EDDSA -> {
                if (!asymmetric) {
                    throw new ConfigException("JWT_ENABLED=true with JWT_ALGORITHM=" + a.spelling()
                            + " needs JWT_PUBLIC_KEY or JWT_JWKS_URL");
                }
                if (secret != null) {
                    LOG.warning("JWT_ALGORITHM=" + a.spelling() + " accepts no HS token: JWT_SECRET is not used");
                }
            }
            case ANY -> {
                if (secret == null && !asymmetric) {
                    throw new ConfigException("JWT_ENABLED=true with JWT_ALGORITHM=auto but no key material:"
                            + " set JWT_SECRET (HS256/HS384/HS512), or JWT_PUBLIC_KEY / JWT_JWKS_URL"
                            + " (RS256/RS384/RS512/EdDSA)");
                }
            }
        }
    }

    private static void checkSecret(JwtAlgorithm a, byte[] secret) {
        if (a.family() == JwtAlgorithm.Family.RSA || a.family() == JwtAlgorithm.Family.EDDSA) {
            return;
        }
        int min = a.minimumSecretBytes();
        if (secret.length < min) {
            throw new ConfigException("JWT_SECRET is " + secret.length + " bytes; JWT_ALGORITHM=" + a.spelling()
                    + " needs at least " + min + " (RFC 7518 section 3.2: an HMAC key as long as its hash;"
                    + " e.g. openssl rand -hex 32 gives 64)");
        }
        if (a == JwtAlgorithm.AUTO && secret.length < 64) {
            LOG.warning("JWT_SECRET is " + secret.length + " bytes: HS" + (secret.length < 48 ? "384 and HS512" : "512")
                    + " tokens cannot be verified with it and are refused as an unsupported algorithm");
        }
    }

    private static URI jwksUrl(String raw) {
        if (raw == null) {
            return null;
        }
        URI uri;
        try {
            uri = new URI(raw.trim());
        } catch (URISyntaxException e) {
            throw Env.invalid("JWT_JWKS_URL", raw, "not a URL");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!(scheme.equals("https") || scheme.equals("http")) || uri.getHost() == null) {
            throw Env.invalid("JWT_JWKS_URL", raw, "an absolute http:// or https:// URL is required");
        }
        if (scheme.equals("http") && !loopback(uri.getHost())) {
            // As the reference: accepted, but signing keys fetched in clear text can be replaced in transit.
            LOG.warning("JWT_JWKS_URL is plain http to " + uri.getHost() + ": keys fetched without TLS can be"
                    + " forged by anyone on the path; use https");
        }
        return uri;
    }

    private static boolean loopback(String host) {
        if (host.equalsIgnoreCase("localhost")) {
            return true;
        }
        try {
            // A literal address only: a name is not resolved here.
            return host.matches("[0-9.]+|\\[?[0-9a-fA-F:]+]?") && InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /**
     * A {@code -----BEGIN PUBLIC KEY-----} PEM (X.509 SubjectPublicKeyInfo) of an RSA or Ed25519
     * key, the shape {@code openssl pkey -pubout} writes. The key type must suit the setting: an RS
     * setting needs RSA, EdDSA needs Ed25519, auto takes either.
     */
    static PublicKey publicKey(String pem, JwtAlgorithm a) {
        // A PEM passed through an environment often arrives with its line breaks written as \n.
        String text = pem.replace("\\n", "\n").trim();
        if (text.contains("BEGIN RSA PUBLIC KEY")) {
            throw new ConfigException("JWT_PUBLIC_KEY is a PKCS#1 RSA key; give the SubjectPublicKeyInfo form"
                    + " (-----BEGIN PUBLIC KEY-----, e.g. openssl rsa -RSAPublicKey_in -pubout)");
        }
        int begin = text.indexOf("-----BEGIN PUBLIC KEY-----");
        int end = text.indexOf("-----END PUBLIC KEY-----");
        if (begin < 0 || end < begin) {
            throw new ConfigException("JWT_PUBLIC_KEY is not a PEM public key (-----BEGIN PUBLIC KEY----- ..."
                    + " -----END PUBLIC KEY-----)");
        }
        byte[] der;
        try {
            der = Base64.getMimeDecoder().decode(text.substring(begin + 26, end));
        } catch (IllegalArgumentException e) {
            throw new ConfigException("JWT_PUBLIC_KEY: the PEM body is not base64");
        }
        PublicKey key = null;
        for (String type : new String[] {"RSA", "Ed25519"}) {
            try {
                key = KeyFactory.getInstance(type).generatePublic(new X509EncodedKeySpec(der));
                break;
            } catch (InvalidKeySpecException e) {
                // try the next type
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("this JDK has no " + type + " key factory", e);
            }
        }
        if (key == null) {
            throw new ConfigException("JWT_PUBLIC_KEY is neither an RSA nor an Ed25519 public key");
        }
        boolean rsa = key instanceof RSAPublicKey;
        if (a.family() == JwtAlgorithm.Family.RSA && !rsa) {
            throw new ConfigException("JWT_PUBLIC_KEY is an Ed25519 key; JWT_ALGORITHM=" + a.spelling()
                    + " needs an RSA key");
        }
        if (a.family() == JwtAlgorithm.Family.EDDSA && !(key instanceof EdECPublicKey)) {
            throw new ConfigException("JWT_PUBLIC_KEY is an RSA key; JWT_ALGORITHM=EdDSA needs an Ed25519 key");
        }
        return key;
    }

    private static void distinctRoles(RoleNames r) {
        Map<String, String> seen = new LinkedHashMap<>();
        String[][] named = {{"JWT_ROLE_ADMIN", r.admin()}, {"JWT_ROLE_READ_WRITE", r.readWrite()},
                {"JWT_ROLE_READ_ONLY", r.readOnly()}, {"JWT_ROLE_WRITE_ONLY", r.writeOnly()}};
        for (String[] n : named) {
            String other = seen.putIfAbsent(n[1], n[0]);
            if (other != null) {
                throw new ConfigException(other + " and " + n[0] + " both name the role \"" + n[1]
                        + "\": each access level needs a role of its own");
            }
        }
    }

    /** Never prints the secret. */
    @Override
    public String toString() {
        if (!enabled) {
            return "AuthSettings[disabled]";
        }
        return "AuthSettings[algorithm=" + algorithm.spelling()
                + ", secret=" + (secret == null ? "unset" : "set (" + secret.length + " bytes)")
                + ", publicKey=" + (publicKey == null ? "unset" : publicKey.getAlgorithm())
                + ", jwksUrl=" + jwksUrl + ", issuer=" + issuer + ", audience=" + audience
                + ", clockSkew=" + clockSkew.toSeconds() + "s, skipPaths=" + skipPaths + "]";
    }
}
