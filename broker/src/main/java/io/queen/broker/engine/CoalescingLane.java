package io.queen.broker.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.ToIntFunction;

/**
 * Batching without a timer: callers add jobs to the lane and then {@link #drain} it; whichever
 * caller finds the lane idle becomes its worker and processes everything queued so far, in rounds
 * of at most {@code maxWeight}, while the jobs of callers arriving meanwhile ride the next round.
 * So batches grow exactly as large as the load makes them, and an idle lane adds no delay. The
 * push fusion (one segment and one commit for concurrent pushes to a partition) and the partition
 * provisioner (one statement for concurrent first pushes to a queue) are both lanes.
 *
 * <p>The processor must answer every job of the batch it is given (complete it, fail it, or mark
 * it done), whatever happens: a job it drops is a caller waiting for ever (callers wait with a
 * timeout and drain again, as a safety net only).
 */
final class CoalescingLane<J> {
    private final ConcurrentLinkedQueue<J> queue = new ConcurrentLinkedQueue<>();
    private final ReentrantLock working = new ReentrantLock();
    private final ToIntFunction<J> weight;
    private final int maxWeight;

    /** {@code weight}: a job's share of a round (messages, names); a round stops at {@code maxWeight}. */
    CoalescingLane(ToIntFunction<J> weight, int maxWeight) {
        this.weight = weight;
        this.maxWeight = maxWeight;
    }

    void add(J job) {
        queue.add(job);
    }

    /**
     * Processes while there is work and nobody else processes. Re-checking the queue after
     * unlocking closes the window in which a job is added after the worker's last poll but before
     * it let go: either this loop takes it, or the lock was free when its owner tried, or a newer
     * worker holds the lock and will make the same check.
     */
    void drain(Consumer<List<J>> processor) {
        while (!queue.isEmpty() && working.tryLock()) {
            try {
                while (true) {
                    List<J> batch = new ArrayList<>();
                    int taken = 0;
                    J next;
                    while (taken < maxWeight && (next = queue.poll()) != null) {
                        batch.add(next);
                        taken += weight.applyAsInt(next);
                    }
                    if (batch.isEmpty()) {
                        break;
                    }
                    processor.accept(batch);
                }
            } finally {
                working.unlock();
            }
        }
    }

    /** Jobs queued and not yet taken by a worker (for tests). */
    int queued() {
        return queue.size();
    }

    /** The lock a worker holds (for tests that make callers pile up behind it). */
    ReentrantLock workerLock() {
        return working;
    }
}
