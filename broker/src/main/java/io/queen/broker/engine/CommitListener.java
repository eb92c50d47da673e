package io.queen.broker.engine;

import java.util.UUID;

/** Told after a commit made messages visible, so parked pops (here and on peer brokers) wake. */
@FunctionalInterface
public interface CommitListener {
    void committed(UUID tenant, String queue, String partition);

    CommitListener NONE = (tenant, queue, partition) -> { };
}
