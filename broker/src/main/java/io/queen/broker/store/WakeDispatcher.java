package io.queen.broker.store;

import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.logging.Logger;

/**
 * Applies what the listener hears to this broker: another broker's keys become signals on the
 * {@link WakeTarget} (marking the rings and waking pops as a local commit would), its changed
 * queues go to the queue-changed action, and its own echoes and malformed payloads are dropped.
 */
final class WakeDispatcher {
    private static final Logger LOG = Logger.getLogger(WakeDispatcher.class.getName());

    private final WakeCodec codec;
    private final WakeTarget target;
    private final String where;
    private final AtomicLong received = new AtomicLong();
    private volatile BiConsumer<UUID, String> onQueueChanged = (tenant, queue) -> { };

    WakeDispatcher(WakeCodec codec, WakeTarget target, String where) {
        this.codec = Objects.requireNonNull(codec, "codec");
        this.target = Objects.requireNonNull(target, "target");
        this.where = Objects.requireNonNull(where, "where");
    }

    /** What to do when another broker reports a queue's options changed. */
    void onQueueChanged(BiConsumer<UUID, String> action) {
        this.onQueueChanged = Objects.requireNonNull(action, "action");
    }

    /** Applies one payload from the channel; a malformed one is logged and skipped. */
    void deliver(String payload) {
        switch (codec.decode(payload)) {
            case WakeCodec.Own own -> {
            }
            case WakeCodec.Malformed bad -> LOG.warning("skipping malformed wake notification on " + where + ": "
                    + bad.reason() + "; payload=" + WakeCodec.abbreviate(payload));
            case WakeCodec.Notice notice -> {
                received.incrementAndGet();
                notice.changed().forEach(q -> onQueueChanged.accept(q.tenant(), q.queue()));
                notice.keys().forEach(k -> target.signal(k.tenant(), k.queue(), k.partition()));
            }
        }
    }

    /** The listener (re)started: whatever was published while it was not listening is unknown. */
    void listenerConnected() {
        target.signalAllWaiting();
    }

    /** Payloads received from other brokers (own echoes and malformed ones are not counted). */
    long received() {
        return received.get();
    }
}
