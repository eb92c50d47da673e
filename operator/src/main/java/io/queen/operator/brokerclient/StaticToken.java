package io.queen.operator.brokerclient;

import java.util.Optional;

/** A token given in the environment ({@code QUEEN_OPERATOR_TOKEN}); it changes only with a restart. */
final class StaticToken implements BrokerCredentials {
    private final String token;

    StaticToken(String token) {
        this.token = Tokens.clean(token, "QUEEN_OPERATOR_TOKEN");
    }

    @Override
    public Optional<String> bearerToken() {
        return Optional.of(token);
    }

    @Override
    public String describe() {
        return "the token in QUEEN_OPERATOR_TOKEN";
    }
}
