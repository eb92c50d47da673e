package io.queen.broker;

import java.util.logging.LogManager;

/**
 * JUL's default manager resets (closes every handler) from its own shutdown hook, racing ours, so
 * the lines that say the broker drained and stopped would be lost. This manager ignores reset; the
 * process is exiting anyway. Installed by {@link Main} before any logger exists.
 */
public final class BrokerLogManager extends LogManager {
    @Override
    public void reset() {
        // Deliberately nothing: keep handlers alive through shutdown hooks.
    }
}
