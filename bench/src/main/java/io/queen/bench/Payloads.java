package io.queen.bench;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/**
 * Message payloads: a JSON object of about {@code payloadBytes} carrying the message's sequence
 * number and its send time ({@link System#nanoTime()}, comparable because the consumers run in the
 * same JVM), padded with random letters so zstd compresses it like text rather than to nothing.
 */
final class Payloads {
    static final String SEQ = "seq";
    static final String SENT_AT = "sentAtNanos";

    private static final String ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    private static final int NOISE_LENGTH = 1 << 16;

    private final int payloadBytes;
    private final String noise;

    Payloads(int payloadBytes) {
        this.payloadBytes = payloadBytes;
        SplittableRandom random = new SplittableRandom(42);
        StringBuilder sb = new StringBuilder(NOISE_LENGTH + payloadBytes);
        for (int i = 0; i < NOISE_LENGTH + payloadBytes; i++) {
            sb.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
        }
        this.noise = sb.toString();
    }

    /** Appends the payload of message {@code seq} to {@code out}. */
    void append(StringBuilder out, long seq, long sentAtNanos) {
        int start = out.length();
        out.append("{\"").append(SEQ).append("\":").append(seq)
           .append(",\"").append(SENT_AT).append("\":").append(sentAtNanos)
           .append(",\"pad\":\"");
        int pad = Math.max(0, payloadBytes - (out.length() - start) - 2);
        // A different window of the noise per message, so consecutive payloads do not repeat.
        int from = (int) Math.floorMod(seq * 7919L, (long) NOISE_LENGTH);
        out.append(noise, from, from + pad).append("\"}");
    }

    byte[] bytes(long seq, long sentAtNanos) {
        StringBuilder sb = new StringBuilder(payloadBytes + 16);
        append(sb, seq, sentAtNanos);
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** The transactionId of message {@code seq} (clients send one; the broker hashes it for dedup and ack). */
    static String transactionId(long seq) {
        return "bench-" + seq;
    }

    /** The partition name of push request number {@code request}: requests go round-robin. */
    static String partitionName(long request, int partitions) {
        return "p" + (request % partitions);
    }
}
