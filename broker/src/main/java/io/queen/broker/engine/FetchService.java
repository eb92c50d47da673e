package io.queen.broker.engine;

import io.queen.broker.engine.segment.Frame;
import io.queen.broker.engine.segment.PayloadCipher;
import io.queen.broker.engine.segment.SegmentCodec;
import io.queen.broker.engine.wake.WakeHub;
import io.queen.broker.store.Database;
import io.queen.broker.store.FetchStore;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * {@code POST /api/v1/fetch}: records read from absolute offsets of named partitions, many
 * partitions per call, with a long poll. Not a pop: no lease, no cursor, nothing to ack, and two
 * readers of the same offsets get the same records; the caller carries its own position.
 * A read that delivers fewer than {@code minBytes} of payload parks on the wake hub (no
 * connection held) and reads again when a commit touches the queue (on this broker or a peer) or
 * after a second, until {@code maxWaitMs} or the broker stops. An entry with an error answers at
 * once: waiting would not change it. Pop maintenance does not pause fetches: they write nothing.
 */
public final class FetchService {
    /** Bounds the broker enforces whatever the caller asks (the reference's). */
    public static final int MAX_ENTRIES = 1024;
    public static final long MAX_WAIT_MS = 30_000;
    public static final int DEFAULT_MAX_BYTES = 1024 * 1024;
    public static final int MAX_BYTES_PER_ENTRY = 8 * 1024 * 1024;
    static final long MAX_TOTAL_BYTES = 64L * 1024 * 1024;
    static final int MAX_RECORDS_PER_ENTRY = 10_000;
    /**
     * Decompressed payload bytes one answer may hold. The other bounds count compressed bytes,
     * and payloads that compress 100:1 would turn 64 MB of segments into gigabytes of response.
     * The first record of the call is always delivered, so an oversized one cannot stall a reader.
     */
    static final long MAX_RENDERED_BYTES = 64L * 1024 * 1024;

    public record Entry(String queue, String partition, long offset, int maxBytes) {
    }

    /** One message: its offset in the partition, and its payload as stored (decrypted), empty for none. */
    public record Record(long offset, String transactionId, byte[] payload, Instant createdAt) {
    }

    /** One entry's answer, in request order; {@code error} null unless the entry could not be read. */
    public record EntryResult(String queue, String partition, List<Record> records, long highWatermark,
                              long logStartOffset, String error) {
    }

    private record Read(List<EntryResult> entries, long payloadBytes, boolean anyError) {
    }

    private final Database database;
    private final PayloadCipher cipher;
    private final WakeHub wake;

    public FetchService(Database database, PayloadCipher cipher, WakeHub wake) {
        this.database = database;
        this.cipher = cipher;
        this.wake = wake;
    }

    /**
     * @param maxWaitMs how long to wait for {@code minBytes}, at most {@link #MAX_WAIT_MS}
     * @param minBytes  payload bytes (each record counting at least one) that end the wait; 0 never waits
     */
    public List<EntryResult> fetch(UUID tenant, List<Entry> entries, long maxWaitMs, long minBytes)
            throws SQLException, InterruptedException {
        if (entries.isEmpty()) {
            return List.of();
        }
        long deadline = wake.ticker().nanoTime() + Math.clamp(maxWaitMs, 0, MAX_WAIT_MS) * 1_000_000L;
        String queue = entries.getFirst().queue();
        // One queue: park on its own wake; several: on the tenant's, which every push of the tenant moves.
        boolean oneQueue = entries.stream().allMatch(e -> e.queue().equals(queue));
        while (true) {
            long seen = oneQueue ? wake.version(tenant, queue) : wake.tenantVersion(tenant);
            Read read = read(tenant, entries);
            if (read.anyError() || read.payloadBytes() >= minBytes || wake.closed()) {
                return read.entries();
            }
            long leftMs = (deadline - wake.ticker().nanoTime()) / 1_000_000L;
            if (leftMs <= 0) {
                return read.entries();
            }
            // Reads again at least once a second without a wake, as a parked pop does.
            long park = Math.min(leftMs, PopService.IDLE_RECHECK_MS);
            if (oneQueue) {
                wake.awaitChange(tenant, queue, seen, park);
            } else {
                wake.awaitTenantChange(tenant, seen, park);
            }
            if (Thread.interrupted()) {
                throw new InterruptedException("fetch interrupted");
            }
        }
    }

    private Read read(UUID tenant, List<Entry> entries) throws SQLException {
        List<FetchStore.Request> requests = new ArrayList<>(entries.size());
        for (Entry e : entries) {
            requests.add(new FetchStore.Request(e.queue(), e.partition(), e.offset(), e.maxBytes()));
        }
        List<FetchStore.Row> rows;
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            rows = FetchStore.fetch(c, tenant, requests, MAX_TOTAL_BYTES, MAX_RECORDS_PER_ENTRY);
        }
        List<EntryResult> results = new ArrayList<>(entries.size());
        long payloadBytes = 0;
        long rendered = 0;
        boolean delivered = false;
        boolean full = false;
        boolean anyError = false;
        int at = 0;
        for (int i = 0; i < entries.size(); i++) {
            Entry e = entries.get(i);
            List<Record> records = new ArrayList<>();
            FetchStore.Row bounds = null;
            for (; at < rows.size() && rows.get(at).entry() == i; at++) {
                FetchStore.Row row = rows.get(at);
                bounds = row;
                if (row.blob() == null || full) {
                    continue;
                }
                List<Frame> frames = SegmentCodec.decode(row.blob(), row.startIdx(), row.take());
                for (int j = 0; j < frames.size(); j++) {
                    if (delivered && rendered >= MAX_RENDERED_BYTES) {
                        full = true; // the caller resumes at the first offset it did not get
                        break;
                    }
                    Frame f = frames.get(j);
                    byte[] payload = cipher.payloadOf(f);
                    records.add(new Record(row.baseOffset() + row.startIdx() + j, f.transactionId(), payload,
                            row.createdAt()));
                    delivered = true;
                    rendered += payload.length + 128;
                    payloadBytes += Math.max(payload.length, 1);
                }
            }
            if (bounds == null) {
                throw new SQLException("log_fetch_v1 returned no row for entry " + i + " (" + e.queue() + "/"
                        + e.partition() + ")");
            }
            anyError |= bounds.error() != null;
            results.add(new EntryResult(e.queue(), e.partition(), List.copyOf(records), bounds.high(),
                    bounds.logStart(), bounds.error()));
        }
        return new Read(List.copyOf(results), payloadBytes, anyError);
    }
}
