package io.queen.broker.http;

import io.queen.broker.engine.auth.AccessLevel;

import static io.queen.broker.engine.auth.AccessLevel.ADMIN;
import static io.queen.broker.engine.auth.AccessLevel.PUBLIC;
import static io.queen.broker.engine.auth.AccessLevel.READ_ONLY;
import static io.queen.broker.engine.auth.AccessLevel.READ_WRITE;
import static io.queen.broker.engine.auth.AccessLevel.WRITE_ONLY;

/**
 * The one table of what each route requires with {@code JWT_ENABLED} on (broker/DESIGN.md,
 * Authentication). It is the reference broker's classification, arm for arm and in its order (the
 * first arm that matches decides), including the routes this broker does not serve (KV, timers,
 * streams, ephemeral queues), so a token's reach is the same on both brokers:
 *
 * <ol>
 *   <li>public: {@code /health}, {@code /metrics}, {@code /metrics/prometheus}, {@code /},
 *       {@code /assets/*}, {@code /favicon*}, {@code /auth/me|login|logout};</li>
 *   <li>admin: everything under {@code /api/v1/system/} and {@code /internal/}, every DELETE under
 *       {@code /api/v1/consumer-groups/} and {@code /api/v1/resources/queues/}, the bulk
 *       {@code DELETE /api/v1/dlq}, and {@code /api/v1/stats/refresh};</li>
 *   <li>read-only: GETs of {@code /status}, {@code /api/v1/status*}, {@code /api/v1/analytics*},
 *       {@code /api/v1/resources/*}, {@code /api/v1/messages*}, {@code /api/v1/consumer-groups*},
 *       {@code /api/v1/dlq*}, {@code /api/v1/traces*}, {@code /api/v1/kv*}, {@code /api/v1/timers*},
 *       {@code /api/v1/ephemeral/queues*}; and the reads whose request is a body:
 *       {@code POST /api/v1/fetch}, {@code POST /api/v1/partitions/changed},
 *       {@code POST /api/v1/resources/kv/list}, {@code /streams/v1/state/get};</li>
 *   <li>write-only (produce only, which cannot read): {@code /api/v1/push},
 *       {@code POST /api/v1/timers}, {@code POST /api/v1/ephemeral/push};</li>
 *   <li>read-write: everything else: pop, ack, transaction, lease extend, configure, seeks,
 *       subscription moves, trace writes, message deletes and replays, and any path not listed.</li>
 * </ol>
 *
 * <p>The path classified is the one Helidon routes on (percent-decoded), so an encoded slash or a
 * doubled one cannot make an admin route look like a read-write one; {@link AuthFilter} refuses a
 * path that is not in its plain form before asking.
 */
public final class RouteAccess {
    private RouteAccess() {
    }

    public static AccessLevel of(String method, String path) {
        if (path.equals("/health") || path.equals("/ready") || path.equals("/metrics") || path.equals("/metrics/prometheus")) {
            return PUBLIC;
        }
        if (path.equals("/") || path.startsWith("/assets/") || path.startsWith("/favicon")) {
            return PUBLIC;
        }
        // /auth/me answers 401 itself when auth is on; /auth/login is the page explaining that.
        if (path.equals("/auth/me") || path.equals("/auth/login") || path.equals("/auth/logout")) {
            return PUBLIC;
        }

        if (path.startsWith("/api/v1/system/") || path.startsWith("/internal/")) {
            return ADMIN;
        }
        boolean delete = method.equals("DELETE");
        if (delete && (path.startsWith("/api/v1/consumer-groups/") || path.startsWith("/api/v1/resources/queues/")
                || path.equals("/api/v1/dlq"))) {
            return ADMIN;
        }
        if (path.equals("/api/v1/stats/refresh")) {
            return ADMIN;
        }

        if (method.equals("GET")) {
            if (path.equals("/status")
                    || path.startsWith("/api/v1/status") || path.startsWith("/api/v1/analytics")
                    || path.startsWith("/api/v1/resources/") || path.startsWith("/api/v1/messages")
                    || path.startsWith("/api/v1/consumer-groups") || path.startsWith("/api/v1/dlq")
                    || path.startsWith("/api/v1/traces") || path.startsWith("/api/v1/kv")
                    || path.startsWith("/api/v1/timers") || path.startsWith("/api/v1/ephemeral/queues")) {
                return READ_ONLY;
            }
        }
        boolean post = method.equals("POST");
        if (post && (path.equals("/api/v1/fetch") || path.equals("/api/v1/partitions/changed")
                || path.equals("/api/v1/resources/kv/list"))) {
            return READ_ONLY;
        }

        if (path.equals("/streams/v1/state/get")) {
            return READ_ONLY;
        }
        if (path.startsWith("/streams/")) {
            return READ_WRITE;
        }

        if (path.equals("/api/v1/push")) {
            return WRITE_ONLY;
        }
        if (post && (path.equals("/api/v1/timers") || path.equals("/api/v1/ephemeral/push"))) {
            return WRITE_ONLY;
        }
        return READ_WRITE;
    }
}
