package io.queen.broker.config;

import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A {@code JWT_ALGORITHM} value: not the algorithm the broker signs with (it signs nothing) but the
 * set of {@code alg} values a token's header may declare. The spellings and the sets are the
 * reference broker's; {@code RS256} is the one family-wide setting (it also takes RS384 and RS512),
 * the other pinned values take exactly one algorithm, and {@code auto} takes all seven.
 */
public enum JwtAlgorithm {
    HS256("HS256", Family.HMAC, Set.of("HS256")),
    HS384("HS384", Family.HMAC, Set.of("HS384")),
    HS512("HS512", Family.HMAC, Set.of("HS512")),
    RS256("RS256", Family.RSA, Set.of("RS256", "RS384", "RS512")),
    RS384("RS384", Family.RSA, Set.of("RS384")),
    RS512("RS512", Family.RSA, Set.of("RS512")),
    EDDSA("EdDSA", Family.EDDSA, Set.of("EdDSA")),
    AUTO("auto", Family.ANY, Set.of("HS256", "HS384", "HS512", "RS256", "RS384", "RS512", "EdDSA"));

    /** Which kind of key material a setting needs. */
    public enum Family { HMAC, RSA, EDDSA, ANY }

    private final String spelling;
    private final Family family;
    private final Set<String> accepted;

    JwtAlgorithm(String spelling, Family family, Set<String> accepted) {
        this.spelling = spelling;
        this.family = family;
        this.accepted = accepted;
    }

    /** The exact spelling, case-sensitive as in the reference ({@code hs256} is refused). */
    public static JwtAlgorithm parse(String value) {
        for (JwtAlgorithm a : values()) {
            if (a.spelling.equals(value)) {
                return a;
            }
        }
        throw Env.invalid("JWT_ALGORITHM", value, "not supported (use " + spellings() + ")");
    }

    static String spellings() {
        String all = Arrays.stream(values()).map(a -> a.spelling).collect(Collectors.joining(", "));
        int last = all.lastIndexOf(", ");
        return all.substring(0, last) + ", or " + all.substring(last + 2);
    }

    /** True when a token whose header says {@code alg} may be verified under this setting. */
    public boolean accepts(String alg) {
        return accepted.contains(alg);
    }

    public Family family() {
        return family;
    }

    public String spelling() {
        return spelling;
    }

    /** The smallest HMAC secret, in bytes, that can verify every HS algorithm this setting takes. */
    int minimumSecretBytes() {
        return switch (this) {
            case HS384 -> 48;
            case HS512 -> 64;
            default -> 32;
        };
    }
}
