package io.queen.broker.http;

import java.util.HashSet;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Writer of the Prometheus text exposition format 0.0.4. Each family is opened with its
 * {@code # HELP} and {@code # TYPE} lines and its samples follow it, contiguous, as the format
 * requires; label values and help text are escaped. Misuse that would produce an exposition a
 * scraper rejects (a sample before its family, a family or series written twice, an invalid
 * metric or label name) is a programming error and throws.
 */
final class PrometheusText {
    static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private static final Pattern METRIC_NAME = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Pattern LABEL_NAME = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]*");
    private static final Set<String> TYPES = Set.of("counter", "gauge", "untyped");

    private final StringBuilder out = new StringBuilder(8192);
    private final Set<String> families = new HashSet<>();
    private final Set<String> series = new HashSet<>();
    private String current;

    /** Opens a family; its samples must follow before the next family is opened. */
    PrometheusText family(String name, String type, String help) {
        if (!TYPES.contains(type)) {
            throw new IllegalArgumentException("unsupported metric type " + type + " for " + name);
        }
        return open(name, type, help);
    }

    /**
     * A whole histogram family without labels: {@code cumulative[i]} observations at most
     * {@code bounds[i]}, then the total as the {@code +Inf} bucket and {@code _count}, and {@code sum}.
     * It is complete when written: a sample after it is refused like one before any family.
     */
    PrometheusText histogram(String name, String help, double[] bounds, long[] cumulative, double sum) {
        if (cumulative.length != bounds.length + 1) {
            throw new IllegalArgumentException(name + ": " + bounds.length + " bounds need "
                    + (bounds.length + 1) + " cumulative counts");
        }
        for (int i = 1; i < cumulative.length; i++) {
            if (cumulative[i] < cumulative[i - 1] || (i < bounds.length && bounds[i] <= bounds[i - 1])) {
                throw new IllegalArgumentException(name + ": bounds must rise and counts must not fall");
            }
        }
        open(name, "histogram", help);
        for (int i = 0; i < cumulative.length; i++) {
            line(name + "_bucket", Long.toString(cumulative[i]),
                    "le", i < bounds.length ? formatDouble(bounds[i]) : "+Inf");
        }
        line(name + "_sum", formatDouble(sum));
        line(name + "_count", Long.toString(cumulative[cumulative.length - 1]));
        current = null;
        return this;
    }

    private PrometheusText open(String name, String type, String help) {
        if (!METRIC_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("invalid metric name: " + name);
        }
        if (!families.add(name)) {
            throw new IllegalStateException("metric family written twice: " + name);
        }
        current = name;
        out.append("# HELP ").append(name).append(' ').append(escapeHelp(help)).append('\n');
        out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
        return this;
    }

    /** A sample of the open family; labels are name, value pairs. */
    PrometheusText sample(long value, String... labels) {
        return write(Long.toString(value), labels);
    }

    PrometheusText sample(double value, String... labels) {
        return write(formatDouble(value), labels);
    }

    String text() {
        return out.toString();
    }

    private PrometheusText write(String value, String... labels) {
        if (current == null) {
            throw new IllegalStateException("sample written outside an open family");
        }
        return line(current, value, labels);
    }

    private PrometheusText line(String metric, String value, String... labels) {
        if (labels.length % 2 != 0) {
            throw new IllegalArgumentException("labels must be name, value pairs: " + metric);
        }
        StringBuilder line = new StringBuilder(metric.length() + 32).append(metric);
        if (labels.length > 0) {
            line.append('{');
            Set<String> names = new HashSet<>();
            for (int i = 0; i < labels.length; i += 2) {
                String label = labels[i];
                if (!LABEL_NAME.matcher(label).matches() || label.startsWith("__") || !names.add(label)) {
                    throw new IllegalArgumentException("invalid or repeated label " + label + " on " + metric);
                }
                if (i > 0) {
                    line.append(',');
                }
                line.append(label).append("=\"").append(escapeLabelValue(labels[i + 1])).append('"');
            }
            line.append('}');
        }
        if (!series.add(line.toString())) {
            throw new IllegalStateException("series written twice: " + line);
        }
        out.append(line).append(' ').append(value).append('\n');
        return this;
    }

    static String escapeLabelValue(String value) {
        StringBuilder b = new StringBuilder(value.length() + 8);
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '\\' -> b.append("\\\\");
                case '"' -> b.append("\\\"");
                case '\n' -> b.append("\\n");
                default -> b.append(c);
            }
        }
        return b.toString();
    }

    static String escapeHelp(String help) {
        return help.replace("\\", "\\\\").replace("\n", "\\n");
    }

    /** Integral values print without a fraction; the rest as Java doubles, which Prometheus parses. */
    static String formatDouble(double v) {
        if (Double.isNaN(v)) {
            return "NaN";
        }
        if (Double.isInfinite(v)) {
            return v > 0 ? "+Inf" : "-Inf";
        }
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return Long.toString((long) v);
        }
        return Double.toString(v);
    }
}
