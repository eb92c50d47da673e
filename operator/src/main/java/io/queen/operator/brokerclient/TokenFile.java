package io.queen.operator.brokerclient;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * A token read from a file ({@code QUEEN_OPERATOR_TOKEN_FILE}, a mounted Secret) on every call:
 * the kubelet updates a mounted Secret in place, so a rotated token is used without a restart, and
 * a file of a few hundred bytes costs nothing next to the HTTP call it goes with.
 */
final class TokenFile implements BrokerCredentials {
    private final Path file;

    TokenFile(Path file) {
        this.file = file;
    }

    @Override
    public Optional<String> bearerToken() {
        String content;
        try {
            content = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException | RuntimeException e) {
            throw new BrokerCredentialsException(BrokerCredentialsException.UNAVAILABLE, false,
                    "cannot read the operator's token file " + file + " (QUEEN_OPERATOR_TOKEN_FILE): "
                            + e.getClass().getSimpleName());
        }
        try {
            return Optional.of(Tokens.clean(content, "the token file " + file));
        } catch (IllegalArgumentException e) {
            throw new BrokerCredentialsException(BrokerCredentialsException.UNAVAILABLE, false, e.getMessage());
        }
    }

    @Override
    public String describe() {
        return "the token in " + file;
    }
}
