package io.queen.broker.http;

import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.ServerRequest;
import io.queen.broker.engine.Tenants;

import java.util.Locale;
import java.util.UUID;

/**
 * Which tenant a request belongs to (broker/DESIGN.md, Tenancy). With QUEEN_TENANCY_HEADER off
 * the header is never read and everything is the default tenant. On: an absent or blank header is
 * the default tenant, a canonical 8-4-4-4-12 hex UUID is that tenant, anything else is a 400.
 */
public final class Tenancy {
    public static final HeaderName HEADER = HeaderNames.create("x-queen-tenant");

    private final boolean headerEnabled;

    public Tenancy(boolean headerEnabled) {
        this.headerEnabled = headerEnabled;
    }

    /** Whether requests may name a tenant; without it every request is the default tenant's, the whole cell. */
    public boolean headerEnabled() {
        return headerEnabled;
    }

    public UUID of(ServerRequest req) {
        if (!headerEnabled || !req.headers().contains(HEADER)) {
            return Tenants.DEFAULT;
        }
        String raw = req.headers().get(HEADER).get().trim();
        if (raw.isEmpty()) {
            return Tenants.DEFAULT;
        }
        if (!Names.isUuid(raw)) {
            throw new BadRequestException("invalid x-queen-tenant header (must be a UUID)");
        }
        return UUID.fromString(raw.toLowerCase(Locale.ROOT));
    }
}
