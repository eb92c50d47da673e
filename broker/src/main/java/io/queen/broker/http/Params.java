package io.queen.broker.http;

import io.helidon.common.parameters.Parameters;

import java.util.Locale;
import java.util.Optional;

/** Typed query parameters; a value of the wrong type is a 400 naming the parameter. */
final class Params {
    private final Parameters query;

    Params(Parameters query) {
        this.query = query;
    }

    Optional<String> string(String name) {
        return query.first(name).asOptional().filter(s -> !s.isEmpty());
    }

    /** A query parameter that names something: absent or empty is empty, else checked by {@code rule}. */
    Optional<String> name(String name, Names.Rule rule) {
        return string(name).map(v -> Names.check(rule, v, "query parameter " + name));
    }

    /**
     * The value as sent, an empty one included: for the filters where {@code name=} selects the
     * empty label rather than meaning "no filter".
     */
    Optional<String> text(String name, Names.Rule rule) {
        return query.first(name).asOptional().map(v -> Names.check(rule, v, "query parameter " + name));
    }

    /** A page's {@code limit} and {@code offset}: a negative one is a 400. */
    static void checkPage(int limit, int offset) {
        if (limit < 0 || offset < 0) {
            throw new BadRequestException("invalid query parameters limit=" + limit + ", offset=" + offset
                    + ": must not be negative");
        }
    }

    int integer(String name, int fallback) {
        Optional<String> v = string(name);
        if (v.isEmpty()) {
            return fallback;
        }
        try {
            return Integer.parseInt(v.get().trim());
        } catch (NumberFormatException e) {
            throw new BadRequestException("invalid query parameter " + name + "=" + v.get() + ": expected an integer");
        }
    }

    boolean bool(String name, boolean fallback) {
        Optional<String> v = string(name);
        if (v.isEmpty()) {
            return fallback;
        }
        return switch (v.get().trim().toLowerCase(Locale.ROOT)) {
            case "true", "1", "yes", "on" -> true;
            case "false", "0", "no", "off" -> false;
            default -> throw new BadRequestException("invalid query parameter " + name + "=" + v.get()
                    + ": expected true or false");
        };
    }
}
