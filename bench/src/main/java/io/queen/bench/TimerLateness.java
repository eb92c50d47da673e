package io.queen.bench;

import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * The timer mode's figures: per fired timer, how late it was written to its queue (the message's
 * {@code createdAt} minus the due time the client asked for) and how late a parked consumer
 * received it (receive time minus the due time), in microseconds of the wall clock, which client
 * and broker share on one host. Timers of the warm-up are received but not counted.
 */
final class TimerLateness {
    /** The target for the delivery p99. */
    static final double TARGET_P99_MS = 250;

    private final DeliveryLedger ledger;
    private final Latencies fire = new Latencies();
    private final Latencies delivery = new Latencies();

    TimerLateness(long timers) {
        this.ledger = new DeliveryLedger(0, timers);
    }

    /** The wall clock now, in microseconds since the epoch. */
    static long nowMicros() {
        return epochMicros(Instant.now());
    }

    static long epochMicros(Instant t) {
        return ChronoUnit.MICROS.between(Instant.EPOCH, t);
    }

    /** A broker timestamp ({@code 2026-12-01T10:00:00.123456Z}) in microseconds since the epoch. */
    static long epochMicros(String iso) {
        return epochMicros(Instant.parse(iso));
    }

    /** One delivery of timer {@code seq}; repeats are counted by the ledger, not timed again. */
    void record(long seq, boolean measured, long dueMicros, long createdAtMicros, long receivedMicros) {
        if (ledger.record(seq) && measured) {
            fire.add(createdAtMicros - dueMicros);
            delivery.add(receivedMicros - dueMicros);
        }
    }

    Latencies fire() {
        return fire;
    }

    Latencies delivery() {
        return delivery;
    }

    DeliveryLedger ledger() {
        return ledger;
    }

    /** Whether the delivery p99 is under the target; false with no deliveries. */
    boolean targetMet() {
        return delivery.count() > 0 && delivery.percentileMs(99) < TARGET_P99_MS;
    }
}
