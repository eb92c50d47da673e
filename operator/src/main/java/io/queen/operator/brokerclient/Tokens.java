package io.queen.operator.brokerclient;

import java.util.Locale;

/** Checks on a token given by a user, with messages that never show the token. */
public final class Tokens {
    private Tokens() {
    }

    /**
     * The token without surrounding white space or a leading {@code Bearer }; refused when empty or
     * when it holds white space inside (two lines pasted together, say), which no JWT does and
     * which would break the header.
     */
    public static String clean(String raw, String where) {
        String token = raw == null ? "" : raw.strip();
        if (token.toLowerCase(Locale.ROOT).startsWith("bearer ")) {
            token = token.substring(7).strip();
        }
        if (token.isEmpty()) {
            throw new IllegalArgumentException(where + " is empty: it must hold the broker token (a JWT)");
        }
        if (token.chars().anyMatch(Character::isWhitespace)) {
            throw new IllegalArgumentException(where + " holds white space inside the token: it must hold one JWT");
        }
        return token;
    }
}
