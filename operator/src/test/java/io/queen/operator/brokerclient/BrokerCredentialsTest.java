package io.queen.operator.brokerclient;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Where a token comes from, and when the operator refuses to send it. */
class BrokerCredentialsTest {
    private static final URI IN_CLUSTER = URI.create("http://queen-broker.queen.svc:6632/");

    @TempDir
    Path dir;

    @Test
    void plainHttpIsClearTextExceptToLoopback() {
        assertTrue(BrokerCredentials.sentInClear(IN_CLUSTER));
        assertTrue(BrokerCredentials.sentInClear(URI.create("http://10.0.0.7:6632")));
        assertTrue(BrokerCredentials.sentInClear(URI.create("http://localhost.example.com:6632")), "a name is not resolved");
        assertFalse(BrokerCredentials.sentInClear(URI.create("http://127.0.0.1:6632")));
        assertFalse(BrokerCredentials.sentInClear(URI.create("http://127.8.9.10:6632")));
        assertFalse(BrokerCredentials.sentInClear(URI.create("http://[::1]:6632")));
        assertFalse(BrokerCredentials.sentInClear(URI.create("http://LOCALHOST:6632")));
        assertFalse(BrokerCredentials.sentInClear(URI.create("https://queen-broker.queen.svc:6632")));
    }

    @Test
    void aTokenForAPlainHttpBrokerIsRefusedUnlessAllowed() {
        CredentialSettings token = new CredentialSettings(CredentialSettings.Source.TOKEN, "a.b.c", null, null, false);

        var e = assertThrows(BrokerCredentialsException.class,
                () -> BrokerCredentials.from(token, IN_CLUSTER, Clock.systemUTC()).bearerToken());
        assertEquals(BrokerCredentialsException.INSECURE, e.reason());
        assertFalse(e.brokerAnswered());
        assertTrue(e.getMessage().contains("QUEEN_OPERATOR_ALLOW_INSECURE_CREDENTIALS=true"), e.getMessage());
        assertFalse(e.getMessage().contains("a.b.c"), "the token is never in a message");

        CredentialSettings allowed = new CredentialSettings(CredentialSettings.Source.TOKEN, "a.b.c", null, null, true);
        assertEquals("a.b.c", BrokerCredentials.from(allowed, IN_CLUSTER, Clock.systemUTC()).bearerToken().orElseThrow());
        assertEquals("a.b.c", BrokerCredentials.from(token, URI.create("https://queen-broker.queen.svc:6632/"),
                Clock.systemUTC()).bearerToken().orElseThrow(), "https needs no allowance");
    }

    @Test
    void withoutCredentialsNothingIsRefused() {
        assertSame(BrokerCredentials.NONE, BrokerCredentials.from(CredentialSettings.NONE, IN_CLUSTER, Clock.systemUTC()));
        assertTrue(BrokerCredentials.NONE.bearerToken().isEmpty());
    }

    @Test
    void aTokenFileIsReadAgainOnEveryCallSoARotatedSecretIsUsed() throws Exception {
        Path file = dir.resolve("token");
        Files.writeString(file, "first.token.jwt\n");
        BrokerCredentials credentials = new TokenFile(file);
        assertEquals("first.token.jwt", credentials.bearerToken().orElseThrow());

        Files.writeString(file, "Bearer second.token.jwt");

        assertEquals("second.token.jwt", credentials.bearerToken().orElseThrow());
    }

    @Test
    void anUnusableTokenFileIsAClearRefusalWithoutItsContent() throws Exception {
        Path file = dir.resolve("token");
        var missing = assertThrows(BrokerCredentialsException.class, () -> new TokenFile(file).bearerToken());
        assertEquals(BrokerCredentialsException.UNAVAILABLE, missing.reason());
        assertTrue(missing.getMessage().contains(file.toString()), missing.getMessage());

        Files.writeString(file, "  \n");
        var empty = assertThrows(BrokerCredentialsException.class, () -> new TokenFile(file).bearerToken());
        assertTrue(empty.getMessage().contains("is empty"), empty.getMessage());

        Files.writeString(file, "one.jwt.here\nsecret-part-two");
        var two = assertThrows(BrokerCredentialsException.class, () -> new TokenFile(file).bearerToken());
        assertTrue(two.getMessage().contains("white space"), two.getMessage());
        assertFalse(two.getMessage().contains("secret-part-two"), two.getMessage());
    }
}
