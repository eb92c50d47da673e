package io.queen.broker.http;

import org.junit.jupiter.api.Test;

import java.util.List;

import static io.queen.broker.engine.auth.AccessLevel.ADMIN;
import static io.queen.broker.engine.auth.AccessLevel.PUBLIC;
import static io.queen.broker.engine.auth.AccessLevel.READ_ONLY;
import static io.queen.broker.engine.auth.AccessLevel.READ_WRITE;
import static io.queen.broker.engine.auth.AccessLevel.WRITE_ONLY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The route table's arms that AuthAccessIT cannot reach (routes this broker does not serve), and the filter's parsing. */
class RouteAccessTest {
    @Test
    void routesThisBrokerDoesNotServeKeepTheReferencesLevels() {
        assertEquals(READ_ONLY, RouteAccess.of("GET", "/api/v1/kv/ns/key"));
        assertEquals(READ_WRITE, RouteAccess.of("PUT", "/api/v1/kv/ns/key"));
        assertEquals(READ_WRITE, RouteAccess.of("POST", "/api/v1/kv"));
        assertEquals(WRITE_ONLY, RouteAccess.of("POST", "/api/v1/timers"), "scheduling a timer is a produce");
        assertEquals(READ_ONLY, RouteAccess.of("GET", "/api/v1/timers/q"));
        assertEquals(READ_WRITE, RouteAccess.of("DELETE", "/api/v1/timers/q/k"));
        assertEquals(WRITE_ONLY, RouteAccess.of("POST", "/api/v1/ephemeral/push"));
        assertEquals(READ_WRITE, RouteAccess.of("GET", "/api/v1/ephemeral/pop"), "a pop moves a cursor");
        assertEquals(READ_ONLY, RouteAccess.of("GET", "/api/v1/ephemeral/queues/q/depth"));
        assertEquals(READ_WRITE, RouteAccess.of("DELETE", "/api/v1/ephemeral/queue/q"));
        assertEquals(READ_ONLY, RouteAccess.of("POST", "/streams/v1/state/get"));
        assertEquals(READ_WRITE, RouteAccess.of("POST", "/streams/v1/queries"));
        assertEquals(READ_ONLY, RouteAccess.of("POST", "/api/v1/resources/kv/list"));
        assertEquals(READ_ONLY, RouteAccess.of("GET", "/api/v1/resources/kv/namespaces"));
        assertEquals(ADMIN, RouteAccess.of("GET", "/api/v1/system/kv-timers"));
        assertEquals(ADMIN, RouteAccess.of("GET", "/internal/api/shared-state/stats"));
        assertEquals(PUBLIC, RouteAccess.of("GET", "/assets/app.js"));
        assertEquals(PUBLIC, RouteAccess.of("GET", "/favicon.ico"));
        assertEquals(PUBLIC, RouteAccess.of("GET", "/"));
        assertEquals(PUBLIC, RouteAccess.of("GET", "/auth/me"));
    }

    @Test
    void theMethodIsPartOfTheDecision() {
        assertEquals(READ_WRITE, RouteAccess.of("GET", "/api/v1/fetch"));
        assertEquals(READ_ONLY, RouteAccess.of("POST", "/api/v1/fetch"));
        assertEquals(WRITE_ONLY, RouteAccess.of("PUT", "/api/v1/push"), "push is write-only whatever the method");
        assertEquals(READ_ONLY, RouteAccess.of("GET", "/api/v1/dlq"));
        assertEquals(ADMIN, RouteAccess.of("DELETE", "/api/v1/dlq"));
        assertEquals(READ_WRITE, RouteAccess.of("DELETE", "/api/v1/messages/p/t"), "a message delete is read-write");
        assertEquals(READ_WRITE, RouteAccess.of("HEAD", "/api/v1/status"), "only GET is a read");
        assertEquals(ADMIN, RouteAccess.of("GET", "/api/v1/stats/refresh"));
        assertEquals(READ_WRITE, RouteAccess.of("GET", "/api/v1/partitions/changed"));
    }

    @Test
    void onlyPlainPathsAreClassified() {
        for (String ok : List.of("/", "/health", "/api/v1/push", "/api/v1/messages/p/t.x", "/api/v1/x/...")) {
            assertTrue(AuthFilter.plain(ok), ok);
        }
        for (String bad : List.of("", "api", "//", "/api//v1", "/api/v1/", "/api/./v1", "/api/..", "/.", "/a/.")) {
            assertFalse(AuthFilter.plain(bad), bad);
        }
    }

    @Test
    void theBearerPrefixIsStrippedInAnyCase() {
        assertEquals("t.o.k", AuthFilter.bearer("Bearer t.o.k"));
        assertEquals("t.o.k", AuthFilter.bearer("bEaReR t.o.k"));
        assertEquals("t.o.k", AuthFilter.bearer("t.o.k"));
        assertEquals("Bearer", AuthFilter.bearer("Bearer"), "no token after it: the whole value, a bad header");
    }
}
