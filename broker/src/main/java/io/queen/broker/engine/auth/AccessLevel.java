package io.queen.broker.engine.auth;

/**
 * What a route requires of its caller (broker/DESIGN.md, Authentication). Not a ladder: a
 * write-only caller passes {@link #WRITE_ONLY} routes and no read, a read-only caller the reverse;
 * read-write passes both and admin everything. {@link Identity#allows} is the one place this is
 * decided.
 */
public enum AccessLevel {
    PUBLIC,
    READ_ONLY,
    WRITE_ONLY,
    READ_WRITE,
    ADMIN
}
