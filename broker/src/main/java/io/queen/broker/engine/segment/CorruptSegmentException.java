package io.queen.broker.engine.segment;

/** A segment blob that cannot be decoded: bad zstd stream or a frame sequence that does not parse exactly. */
public final class CorruptSegmentException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public CorruptSegmentException(String message) {
        super(message);
    }

    public CorruptSegmentException(String message, Throwable cause) {
        super(message, cause);
    }
}
