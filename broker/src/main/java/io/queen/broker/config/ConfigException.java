package io.queen.broker.config;

/** A setting that cannot be used; the message names the variable and the value found. */
public final class ConfigException extends RuntimeException {
    public ConfigException(String message) {
        super(message);
    }
}
