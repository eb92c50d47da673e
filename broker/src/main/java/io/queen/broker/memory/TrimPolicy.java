package io.queen.broker.memory;

/**
 * When a heap trim is worth its pause: the broker was quiet over a whole look (it allocated less
 * than the quiet rate), and the committed heap has grown by at least the growth step since the last
 * trim left it. Quiet, because a trim under a burst would shrink the young generation the burst
 * needs and be undone by the next collections; grown, because a trim that found nothing to give
 * back must not repeat every interval. Pure arithmetic on what {@link HeapTrimmer} reads, so the
 * choice is tested without a collector.
 */
final class TrimPolicy {
    private final long quietBytesPerSecond;
    private final long growthBytes;
    private long lastAllocatedBytes = -1;
    private long lastNanos;
    private long committedAfterTrim;
    private double lastRateBytesPerSecond;

    TrimPolicy(long quietBytesPerSecond, long growthBytes) {
        this.quietBytesPerSecond = quietBytesPerSecond;
        this.growthBytes = growthBytes;
    }

    /**
     * One look: {@code allocatedBytes} is the process's total allocation so far, {@code nanos} a
     * monotonic reading, {@code committedBytes} the heap now committed. The first look only sets the
     * baseline.
     */
    boolean shouldTrim(long allocatedBytes, long nanos, long committedBytes) {
        long previousAllocated = lastAllocatedBytes;
        long previousNanos = lastNanos;
        lastAllocatedBytes = allocatedBytes;
        lastNanos = nanos;
        if (previousAllocated < 0 || nanos <= previousNanos) {
            return false;
        }
        lastRateBytesPerSecond = (allocatedBytes - previousAllocated) * 1e9 / (nanos - previousNanos);
        return lastRateBytesPerSecond < quietBytesPerSecond && committedBytes - committedAfterTrim >= growthBytes;
    }

    /** A trim ran and left {@code committedBytes} committed: the next one waits for growth from there. */
    void trimmed(long committedBytes) {
        committedAfterTrim = committedBytes;
    }

    /** The allocation rate the last look measured, bytes per second. */
    double lastRateBytesPerSecond() {
        return lastRateBytesPerSecond;
    }
}
