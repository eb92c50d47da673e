package io.queen.broker.engine.segment;

import java.util.Arrays;
import java.util.Objects;
import java.util.UUID;

/**
 * One message inside a segment (broker/DESIGN.md, Storage model).
 *
 * @param messageId     message id (UUIDv7 for new messages)
 * @param traceId       optional trace id, {@code null} when absent
 * @param transactionId dedup/ack key, at most 65535 UTF-8 bytes
 * @param producerSub   JWT subject of the producer, {@code null} when absent; at most 65535 UTF-8 bytes
 * @param payload       raw JSON text (or an encryption envelope); empty means JSON {@code null}
 * @param encrypted     the payload is an encryption envelope (frame flag 4)
 */
public record Frame(UUID messageId, UUID traceId, String transactionId, String producerSub, byte[] payload,
                    boolean encrypted) {

    /** Length fields for txn and producerSub are u16. */
    public static final int MAX_STRING_BYTES = 0xFFFF;

    public Frame {
        Objects.requireNonNull(messageId, "messageId");
        Objects.requireNonNull(transactionId, "transactionId");
        Objects.requireNonNull(payload, "payload");
        checkLength("transactionId", transactionId);
        if (producerSub != null) {
            checkLength("producerSub", producerSub);
        }
    }

    /** True when the payload renders as JSON {@code null}. */
    public boolean isNullPayload() {
        return payload.length == 0;
    }

    private static void checkLength(String field, String value) {
        // Fast path: even all-3-byte chars cannot exceed the limit; avoids encoding on the hot path.
        if (value.length() * 3L <= MAX_STRING_BYTES) {
            return;
        }
        long bytes = utf8Length(value);
        if (bytes > MAX_STRING_BYTES) {
            throw new IllegalArgumentException(
                    field + " is " + bytes + " UTF-8 bytes, limit is " + MAX_STRING_BYTES);
        }
    }

    /** Byte length of {@code s} as encoded by String.getBytes(UTF_8) (lone surrogates become '?'). */
    static long utf8Length(String s) {
        long n = 0;
        for (int i = 0, len = s.length(); i < len; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n += 1;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < len && Character.isLowSurrogate(s.charAt(i + 1))) {
                n += 4;
                i++;
            } else if (Character.isSurrogate(c)) {
                n += 1;
            } else {
                n += 3;
            }
        }
        return n;
    }

    // Records compare arrays by identity; frames are values, so compare the payload by content.
    @Override
    public boolean equals(Object o) {
        return o instanceof Frame f
                && encrypted == f.encrypted
                && messageId.equals(f.messageId)
                && Objects.equals(traceId, f.traceId)
                && transactionId.equals(f.transactionId)
                && Objects.equals(producerSub, f.producerSub)
                && Arrays.equals(payload, f.payload);
    }

    @Override
    public int hashCode() {
        return Objects.hash(messageId, traceId, transactionId, producerSub, Arrays.hashCode(payload), encrypted);
    }

    @Override
    public String toString() {
        return "Frame[messageId=" + messageId + ", traceId=" + traceId + ", transactionId=" + transactionId
                + ", producerSub=" + producerSub + ", payload=" + payload.length + " bytes, encrypted=" + encrypted + "]";
    }
}
