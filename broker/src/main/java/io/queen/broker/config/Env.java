package io.queen.broker.config;

import java.util.Locale;
import java.util.Map;

/**
 * Typed, validating reads of environment variables. Follows the reference broker's rules: unset or
 * empty means the default; booleans accept true/false, 1/0, yes/no, on/off (any case); anything
 * else is fatal, and the error names the variable and the value.
 */
public final class Env {
    private final Map<String, String> vars;

    public Env(Map<String, String> vars) {
        this.vars = Map.copyOf(vars);
    }

    public static Env system() {
        return new Env(System.getenv());
    }

    /** The raw value, or null when unset or empty. */
    public String raw(String name) {
        String v = vars.get(name);
        return v == null || v.isEmpty() ? null : v;
    }

    public boolean isSet(String name) {
        return raw(name) != null;
    }

    public String string(String name, String fallback) {
        String v = raw(name);
        return v == null ? fallback : v;
    }

    public boolean bool(String name, boolean fallback) {
        String v = raw(name);
        if (v == null) {
            return fallback;
        }
        return switch (v.trim().toLowerCase(Locale.ROOT)) {
            case "true", "1", "yes", "on" -> true;
            case "false", "0", "no", "off" -> false;
            default -> throw invalid(name, v, "expected true/false, 1/0, yes/no or on/off");
        };
    }

    public int integer(String name, int fallback, int min, int max) {
        long v = longValue(name, fallback, min, max);
        return (int) v;
    }

    public long longValue(String name, long fallback, long min, long max) {
        String v = raw(name);
        if (v == null) {
            return fallback;
        }
        long parsed;
        try {
            parsed = Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw invalid(name, v, "expected an integer");
        }
        if (parsed < min || parsed > max) {
            throw invalid(name, v, "expected a value between " + min + " and " + max);
        }
        return parsed;
    }

    static ConfigException invalid(String name, String value, String why) {
        return new ConfigException("invalid " + name + "=\"" + value + "\": " + why);
    }
}
