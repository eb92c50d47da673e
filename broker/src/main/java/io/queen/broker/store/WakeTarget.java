package io.queen.broker.store;

import java.util.UUID;

/**
 * Where the wake channel delivers what it learns: pops parked on this broker. The store owns this
 * interface and the engine implements it, so the dependency runs one way (engine on store).
 */
public interface WakeTarget {
    /** Messages became visible on a partition (committed here or on another broker). */
    void signal(UUID tenant, String queue, String partition);

    /** Notifications may have been missed (the listener reconnected): every parked pop looks again. */
    void signalAllWaiting();
}
