package io.queen.broker.http;

/**
 * A payload is stored as the bytes sent, but a dead-lettered copy and a trace are PostgreSQL
 * {@code jsonb}, which refuses the escape {@code \u0000} and an escaped surrogate that is not half
 * of a pair. Such a payload would be accepted at push and then fail every ack that dead-letters it,
 * so it is refused at push. The scan looks at escapes only: a backslash is rare in payloads, so
 * this is one pass over the bytes with nothing decoded.
 */
final class PayloadText {
    private PayloadText() {
    }

    /** Null when every escape in the JSON text {@code json} can be stored as jsonb, else why not. */
    static String problem(byte[] json) {
        for (int i = 0; i < json.length; i++) {
            if (json[i] != '\\') {
                continue;
            }
            if (i + 1 >= json.length) {
                return null; // Not valid JSON either; the parser has said so already.
            }
            if (json[i + 1] != 'u') {
                i++; // \" \\ \n ...: the escaped character cannot start another escape.
                continue;
            }
            int unit = hex4(json, i + 2);
            if (unit == 0) {
                return "contains the escape \\u0000, which stored JSON cannot hold";
            }
            if (unit >= 0xD800 && unit <= 0xDBFF) {
                int low = i + 7 < json.length && json[i + 6] == '\\' && json[i + 7] == 'u' ? hex4(json, i + 8) : -1;
                if (low < 0xDC00 || low > 0xDFFF) {
                    return "contains an escaped UTF-16 surrogate that is not half of a pair";
                }
                i += 11;
            } else if (unit >= 0xDC00 && unit <= 0xDFFF) {
                return "contains an escaped UTF-16 surrogate that is not half of a pair";
            } else {
                i += 5;
            }
        }
        return null;
    }

    private static int hex4(byte[] b, int at) {
        if (at + 4 > b.length) {
            return -1;
        }
        int v = 0;
        for (int k = 0; k < 4; k++) {
            int d = Character.digit(b[at + k], 16);
            if (d < 0) {
                return -1;
            }
            v = v * 16 + d;
        }
        return v;
    }
}
