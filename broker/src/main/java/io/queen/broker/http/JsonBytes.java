package io.queen.broker.http;

import com.fasterxml.jackson.core.io.JsonStringEncoder;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.UUID;

/**
 * A growable UTF-8 buffer for the two bodies answered most often (push results, popped messages),
 * written token by token. Jackson's generator spent most of its time in writeString for the short
 * ASCII strings these bodies hold (ids, names, statuses); here those are copied byte by byte and
 * anything else is escaped by Jackson's own encoder, so the output is the same.
 */
final class JsonBytes {
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NULL = {'n', 'u', 'l', 'l'};

    private byte[] buf;
    private int len;

    JsonBytes(int capacity) {
        buf = new byte[Math.max(capacity, 64)];
    }

    /** Characters that need no escape and are one byte in UTF-8: written as they are. */
    private static boolean plain(char c) {
        return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
    }

    /** A literal made of plain ASCII only (field names, punctuation): the caller vouches for it. */
    JsonBytes raw(String ascii) {
        int n = ascii.length();
        ensure(n);
        for (int i = 0; i < n; i++) {
            buf[len++] = (byte) ascii.charAt(i);
        }
        return this;
    }

    JsonBytes raw(byte[] bytes) {
        ensure(bytes.length);
        System.arraycopy(bytes, 0, buf, len, bytes.length);
        len += bytes.length;
        return this;
    }

    /** A JSON string, or null. */
    JsonBytes string(String s) {
        if (s == null) {
            return raw(NULL);
        }
        int n = s.length();
        ensure(n + 2);
        int start = len;
        buf[len++] = '"';
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (!plain(c)) {
                len = start;
                buf[len++] = '"';
                raw(JsonStringEncoder.getInstance().quoteAsUTF8(s));
                ensure(1);
                buf[len++] = '"';
                return this;
            }
            buf[len++] = (byte) c;
        }
        buf[len++] = '"';
        return this;
    }

    /** A UUID as its canonical quoted string, without making the string. */
    JsonBytes uuid(UUID id) {
        if (id == null) {
            return raw(NULL);
        }
        ensure(38);
        buf[len++] = '"';
        hex(id.getMostSignificantBits() >>> 32, 8);
        buf[len++] = '-';
        hex(id.getMostSignificantBits() >>> 16, 4);
        buf[len++] = '-';
        hex(id.getMostSignificantBits(), 4);
        buf[len++] = '-';
        hex(id.getLeastSignificantBits() >>> 48, 4);
        buf[len++] = '-';
        hex(id.getLeastSignificantBits(), 12);
        buf[len++] = '"';
        return this;
    }

    private void hex(long value, int digits) {
        for (int i = digits - 1; i >= 0; i--) {
            buf[len + i] = HEX[(int) (value & 0xF)];
            value >>>= 4;
        }
        len += digits;
    }

    JsonBytes number(long n) {
        if (n < 0) {
            if (n == Long.MIN_VALUE) {
                return raw(Long.toString(n));
            }
            ensure(1);
            buf[len++] = '-';
            n = -n;
        }
        // Digits straight into the buffer, last first: Long.toString's String per number showed in
        // push profiles (an index per pushed message).
        int digits = 1;
        for (long rest = n / 10; rest != 0; rest /= 10) {
            digits++;
        }
        ensure(digits);
        for (int i = len + digits - 1; i >= len; i--) {
            buf[i] = (byte) ('0' + n % 10);
            n /= 10;
        }
        len += digits;
        return this;
    }

    byte[] toByteArray() {
        return Arrays.copyOf(buf, len);
    }

    private void ensure(int more) {
        if (len + more > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + more));
        }
    }
}
