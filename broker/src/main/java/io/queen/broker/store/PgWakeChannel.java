package io.queen.broker.store;

import io.queen.broker.config.DatabaseSettings;

import java.time.Duration;
import java.util.Objects;
import java.util.UUID;
import java.util.function.BiConsumer;

/**
 * Wakes long-poll pops of every broker sharing the database when a push commits. Locally the hub is
 * signalled at once; other brokers learn through PostgreSQL NOTIFY on {@value #CHANNEL}, needing no
 * configuration beyond the database itself. This class only wires the parts, each with one concern:
 *
 * <ul>
 *   <li>{@link WakeCodec}: the payload format, collected keys in, notifications out and back;</li>
 *   <li>{@link WakeSender}: collects what committed here and NOTIFYs it every
 *       {@value WakeSender#TICK_MS} ms, and only while another broker listens;</li>
 *   <li>{@link WakeListener}: LISTENs and reconnects;</li>
 *   <li>{@link WakeDispatcher}: applies what the listener hears to the {@link WakeTarget};</li>
 *   <li>{@link WakeConnections}: the dedicated connections both loops hold.</li>
 * </ul>
 *
 * <p>Both directions survive a database restart, and after the listener is back every parked pop is
 * woken, since anything may have been missed meanwhile. Delivery is best effort; pops still re-claim
 * on their own backoff. Queue option changes travel the same way, so another broker drops its cached
 * options (encryption, dedup window) at once instead of after the catalog's TTL.
 */
public final class PgWakeChannel implements AutoCloseable {
    public static final String CHANNEL = WakeCodec.CHANNEL;
    private static final Duration STOP_PATIENCE = Duration.ofSeconds(2);

    private final WakeTarget hub;
    private final String brokerId;
    private final WakeSender sender;
    private final WakeListener listener;
    private final WakeDispatcher dispatcher;

    public PgWakeChannel(DatabaseSettings settings, WakeTarget hub, String brokerId) {
        this.hub = Objects.requireNonNull(hub, "hub");
        this.brokerId = Objects.requireNonNull(brokerId, "brokerId");
        WakeConnections connections = new WakeConnections(settings);
        WakeCodec codec = new WakeCodec(brokerId);
        String listenerName = WakeConnections.listenerName(brokerId);
        this.dispatcher = new WakeDispatcher(codec, hub, connections.where());
        this.sender = new WakeSender(connections, codec, listenerName);
        this.listener = new WakeListener(connections, listenerName, dispatcher);
        sender.start();
        listener.start();
    }

    /** A random id for this broker process, so a broker ignores its own notifications. */
    public static String newBrokerId() {
        return UUID.randomUUID().toString();
    }

    /** A push (or anything making messages visible) committed here: wake local pops now, other brokers on the next tick. */
    public void published(UUID tenant, String queue, String partition) {
        hub.signal(tenant, queue, partition);
        sender.published(tenant, queue, partition);
    }

    /** A queue's options changed here: other brokers drop what they cached of it on the next tick. */
    public void queueChanged(UUID tenant, String queue) {
        sender.queueChanged(tenant, queue);
    }

    /** What to do when another broker reports a queue's options changed. */
    public void onQueueChanged(BiConsumer<UUID, String> action) {
        dispatcher.onQueueChanged(action);
    }

    /** NOTIFY payloads sent to other brokers. */
    public long notificationsSent() {
        return sender.sent();
    }

    /** Ticks whose keys were not sent because no other broker was listening. */
    public long ticksUnsentAlone() {
        return sender.unsentAlone();
    }

    /** Notifications received from other brokers (our own echoes are not counted). */
    public long notificationsReceived() {
        return dispatcher.received();
    }

    /** Whether the listener connection is up and LISTENing right now. */
    public boolean listening() {
        return listener.listening();
    }

    /** How many times the listener has (re)started LISTENing: 1 after the first connect. */
    public long listenSessions() {
        return listener.sessions();
    }

    public String brokerId() {
        return brokerId;
    }

    /** Applies one payload as if the listener had heard it (the listener's own path, for tests). */
    void deliver(String payload) {
        dispatcher.deliver(payload);
    }

    @Override
    public void close() {
        // Both loops are told first, so they wind down together.
        sender.stop();
        listener.stop();
        listener.awaitStop(STOP_PATIENCE);
        sender.awaitStop(STOP_PATIENCE);
    }
}
