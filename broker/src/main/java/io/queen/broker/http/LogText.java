package io.queen.broker.http;

/** Client-given text made safe for a log line: control characters escaped, length capped. */
final class LogText {
    private static final int MAX = 300;

    private LogText() {
    }

    static String of(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder out = new StringBuilder(Math.min(s.length(), MAX) + 8);
        for (int i = 0; i < s.length() && out.length() < MAX; i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c == 0x7f || Character.isSurrogate(c)) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        if (s.length() > MAX) {
            out.append("...(").append(s.length()).append(" chars)");
        }
        return out.toString();
    }
}
