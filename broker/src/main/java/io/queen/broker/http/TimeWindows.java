package io.queen.broker.http;

import io.queen.broker.engine.ObservabilityService;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.Optional;

/**
 * The {@code from} / {@code to} query parameters of the status and analytics routes. Accepted: an
 * ISO-8601 instant or offset date-time, a local date-time or a date (read as UTC). Missing values
 * default to the route's span ending now; an unreadable value, or from after to, is a 400.
 */
final class TimeWindows {
    private TimeWindows() {
    }

    static ObservabilityService.Window window(Params q, Duration defaultSpan) {
        Instant to = instant(q, "to").orElseGet(Instant::now);
        Instant from = instant(q, "from").orElse(to.minus(defaultSpan));
        if (from.isAfter(to)) {
            throw new BadRequestException("invalid time window: from " + from + " is after to " + to);
        }
        return new ObservabilityService.Window(from, to);
    }

    static Optional<Instant> instant(Params q, String name) {
        Optional<String> raw = q.string(name).map(String::trim).filter(s -> !s.isEmpty());
        return raw.map(v -> parse(name, v));
    }

    private static Instant parse(String name, String value) {
        try {
            return OffsetDateTime.parse(value).toInstant();
        } catch (DateTimeParseException notOffset) {
            try {
                return LocalDateTime.parse(value).toInstant(ZoneOffset.UTC);
            } catch (DateTimeParseException notLocal) {
                try {
                    return LocalDate.parse(value).atStartOfDay().toInstant(ZoneOffset.UTC);
                } catch (DateTimeParseException notDate) {
                    throw new BadRequestException("invalid query parameter " + name + "=" + value
                            + ": expected an ISO-8601 timestamp such as 2024-01-31T12:00:00Z");
                }
            }
        }
    }
}
