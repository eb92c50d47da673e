package io.queen.broker.http;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/** Wire formats shared by the routes: timestamps as the reference renders them (UTC, microseconds, Z). */
final class Wire {
    private static final DateTimeFormatter TIMESTAMP =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC);

    private Wire() {
    }

    static String timestamp(Instant instant) {
        return instant == null ? null : TIMESTAMP.format(instant);
    }
}
