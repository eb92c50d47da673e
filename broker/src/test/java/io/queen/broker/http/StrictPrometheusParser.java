package io.queen.broker.http;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A deliberately strict reader of the Prometheus text format 0.0.4, for tests: every line is a
 * {@code # HELP}, a {@code # TYPE} or a sample {@code name{labels} value}; a family's HELP and TYPE
 * come before its samples, once each; a family's samples are contiguous and belong to the family
 * declared last; no series appears twice; label values use only the three legal escapes. Any
 * deviation throws {@link AssertionError} naming the line. A histogram's samples are its
 * {@code _bucket} (with {@code le}), {@code _sum} and {@code _count} series; its buckets must not fall
 * as {@code le} rises, and the {@code +Inf} bucket must equal {@code _count}.
 */
final class StrictPrometheusParser {
    private static final Pattern HELP = Pattern.compile("# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)");
    private static final Pattern TYPE = Pattern.compile("# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|untyped|summary|histogram)");
    private static final Pattern SAMPLE = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{.*})? (\\S+)");
    private static final Pattern LABEL_NAME = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]*");

    /** One parsed exposition: family types and help, and each family's samples keyed by label map. */
    record Exposition(Map<String, String> types, Map<String, String> help,
                      Map<String, Map<Map<String, String>, Double>> families) {
        boolean hasFamily(String name) {
            return types.containsKey(name);
        }

        /** The value of one series, labels given as name, value pairs (any order); null when absent. */
        Double value(String name, String... labels) {
            return samples(name).get(pairs(labels));
        }

        /** Every series of a family, keyed by its label map (empty when the family has none). */
        Map<Map<String, String>, Double> samples(String name) {
            return families.getOrDefault(name, Map.of());
        }
    }

    private StrictPrometheusParser() {
    }

    static Exposition parse(String text) {
        if (!text.isEmpty() && !text.endsWith("\n")) {
            throw new AssertionError("exposition must end with a newline");
        }
        Map<String, String> types = new LinkedHashMap<>();
        Map<String, String> help = new HashMap<>();
        Map<String, Map<Map<String, String>, Double>> families = new LinkedHashMap<>();
        List<String> closed = new ArrayList<>();
        String current = null;
        String[] lines = text.split("\n", -1);
        int n = 0;
        for (String line : lines) {
            n++;
            if (line.isEmpty()) {
                if (n == lines.length) {
                    continue;
                }
                throw new AssertionError("line " + n + ": empty line");
            }
            Matcher m;
            if ((m = HELP.matcher(line)).matches()) {
                String name = m.group(1);
                if (help.containsKey(name) || types.containsKey(name) || closed.contains(name)) {
                    throw new AssertionError("line " + n + ": HELP for " + name + " repeated or after its TYPE/samples");
                }
                checkHelpEscapes(m.group(2), n);
                if (current != null) {
                    closed.add(current);
                }
                current = name;
                help.put(name, m.group(2));
            } else if ((m = TYPE.matcher(line)).matches()) {
                String name = m.group(1);
                if (!name.equals(current) || types.containsKey(name)) {
                    throw new AssertionError("line " + n + ": TYPE for " + name + " must follow its HELP, once");
                }
                types.put(name, m.group(2));
            } else if (line.startsWith("#")) {
                throw new AssertionError("line " + n + ": unexpected comment: " + line);
            } else if ((m = SAMPLE.matcher(line)).matches()) {
                String name = m.group(1);
                if (!sampleOf(name, current, types)) {
                    throw new AssertionError("line " + n + ": sample of " + name
                            + " outside its family (HELP/TYPE first, samples contiguous): " + line);
                }
                Map<String, String> labels = m.group(2) == null ? Map.of() : parseLabels(m.group(2), line);
                Map<Map<String, String>, Double> samples = families.computeIfAbsent(name, k -> new LinkedHashMap<>());
                if (samples.put(labels, parseValue(m.group(3), line)) != null) {
                    throw new AssertionError("line " + n + ": duplicate series " + name + labels);
                }
            } else {
                throw new AssertionError("line " + n + ": not a HELP, TYPE or sample line: " + line);
            }
        }
        types.forEach((name, type) -> {
            if (type.equals("histogram")) {
                checkHistogram(name, families);
            }
        });
        return new Exposition(types, help, families);
    }

    /** Whether a sample named {@code name} belongs to the open family {@code current}. */
    private static boolean sampleOf(String name, String current, Map<String, String> types) {
        if (current == null || !types.containsKey(current)) {
            return false;
        }
        if (name.equals(current)) {
            return !types.get(current).equals("histogram");
        }
        return types.get(current).equals("histogram")
                && (name.equals(current + "_bucket") || name.equals(current + "_sum") || name.equals(current + "_count"));
    }

    private static void checkHistogram(String name, Map<String, Map<Map<String, String>, Double>> families) {
        Map<Map<String, String>, Double> buckets = families.getOrDefault(name + "_bucket", Map.of());
        Map<Map<String, String>, Double> counts = families.getOrDefault(name + "_count", Map.of());
        if (counts.isEmpty() || !families.containsKey(name + "_sum")) {
            throw new AssertionError("histogram " + name + " without _count or _sum");
        }
        counts.forEach((labels, count) -> {
            TreeMap<Double, Double> byBound = new TreeMap<>();
            buckets.forEach((b, v) -> {
                Map<String, String> rest = new TreeMap<>(b);
                String le = rest.remove("le");
                if (le == null) {
                    throw new AssertionError("histogram bucket of " + name + " without le: " + b);
                }
                if (rest.equals(labels)) {
                    byBound.put(parseValue(le, name + " le=" + le), v);
                }
            });
            double previous = 0;
            for (double v : byBound.values()) {
                if (v < previous) {
                    throw new AssertionError("histogram " + name + labels + ": buckets fall as le rises: " + byBound);
                }
                previous = v;
            }
            Double inf = byBound.get(Double.POSITIVE_INFINITY);
            if (inf == null || !inf.equals(count)) {
                throw new AssertionError("histogram " + name + labels + ": +Inf bucket " + inf + " is not _count " + count);
            }
        });
    }

    private static void checkHelpEscapes(String help, int n) {
        for (int i = 0; i < help.length(); i++) {
            if (help.charAt(i) == '\\') {
                if (i + 1 >= help.length() || (help.charAt(i + 1) != '\\' && help.charAt(i + 1) != 'n')) {
                    throw new AssertionError("line " + n + ": bad escape in HELP text");
                }
                i++;
            }
        }
    }

    private static Map<String, String> parseLabels(String block, String line) {
        Map<String, String> labels = new TreeMap<>();
        int i = 1;
        int end = block.length() - 1;
        if (block.charAt(0) != '{' || block.charAt(end) != '}') {
            throw new AssertionError("bad label block: " + line);
        }
        while (i < end) {
            int eq = block.indexOf('=', i);
            if (eq < 0) {
                throw new AssertionError("label without '=': " + line);
            }
            String name = block.substring(i, eq);
            if (!LABEL_NAME.matcher(name).matches()) {
                throw new AssertionError("bad label name '" + name + "': " + line);
            }
            if (eq + 1 >= end || block.charAt(eq + 1) != '"') {
                throw new AssertionError("label value not quoted: " + line);
            }
            StringBuilder value = new StringBuilder();
            int j = eq + 2;
            for (; j < end; j++) {
                char c = block.charAt(j);
                if (c == '\\') {
                    char e = block.charAt(++j);
                    switch (e) {
                        case '\\' -> value.append('\\');
                        case '"' -> value.append('"');
                        case 'n' -> value.append('\n');
                        default -> throw new AssertionError("illegal escape \\" + e + " in label value: " + line);
                    }
                } else if (c == '"') {
                    break;
                } else if (c == '\n') {
                    throw new AssertionError("raw newline in label value: " + line);
                } else {
                    value.append(c);
                }
            }
            if (j >= end + 1 || block.charAt(j) != '"') {
                throw new AssertionError("unterminated label value: " + line);
            }
            if (labels.put(name, value.toString()) != null) {
                throw new AssertionError("label " + name + " repeated: " + line);
            }
            i = j + 1;
            if (i < end) {
                if (block.charAt(i) != ',') {
                    throw new AssertionError("labels must be comma separated: " + line);
                }
                i++;
                if (i >= end) {
                    throw new AssertionError("trailing comma in labels: " + line);
                }
            }
        }
        return labels;
    }

    private static double parseValue(String v, String line) {
        switch (v) {
            case "NaN":
                return Double.NaN;
            case "+Inf":
                return Double.POSITIVE_INFINITY;
            case "-Inf":
                return Double.NEGATIVE_INFINITY;
            default:
                try {
                    return Double.parseDouble(v);
                } catch (NumberFormatException e) {
                    throw new AssertionError("bad sample value '" + v + "': " + line);
                }
        }
    }

    private static Map<String, String> pairs(String... labels) {
        Map<String, String> m = new TreeMap<>();
        for (int i = 0; i < labels.length; i += 2) {
            m.put(labels[i], labels[i + 1]);
        }
        return m;
    }
}
