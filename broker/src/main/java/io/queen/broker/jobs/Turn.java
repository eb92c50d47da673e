package io.queen.broker.jobs;

/**
 * Whether this replica runs a job's cycle now. A cluster singleton claims a lease
 * ({@link LeaseTurn}); a per-replica job always runs ({@link #EVERY_TIME}).
 */
interface Turn {

    /** A token to release after the run, or null when it is not this replica's turn. */
    Long claim() throws Exception;

    /** Ends the turn taken by {@link #claim}, whatever the run's outcome. */
    void release(long token, long elapsedMs) throws Exception;

    Turn EVERY_TIME = new Turn() {
        @Override
        public Long claim() {
            return 0L;
        }

        @Override
        public void release(long token, long elapsedMs) {
        }
    };
}
