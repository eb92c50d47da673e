package io.queen.broker.engine;

import java.util.UUID;

/** Tenant identities. Without the tenancy header every request belongs to the default tenant. */
public final class Tenants {
    public static final UUID DEFAULT = UUID.fromString("00000000-0000-0000-0000-000000000001");
    /** The reserved consumer group of queue mode (no group named). */
    public static final String QUEUE_MODE = "__QUEUE_MODE__";
    public static final String DEFAULT_PARTITION = "Default";

    private Tenants() {
    }
}
