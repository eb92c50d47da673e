package io.queen.broker.http;

import io.helidon.webserver.http.ServerRequest;
import io.queen.broker.engine.Tenants;

import java.util.UUID;

/**
 * Which tenant a request belongs to. Without the tenancy header setting every request is the
 * default tenant; header-based tenancy (x-queen-tenant) is part of the management-plane work.
 */
public final class Tenancy {
    public UUID of(ServerRequest req) {
        return Tenants.DEFAULT;
    }
}
