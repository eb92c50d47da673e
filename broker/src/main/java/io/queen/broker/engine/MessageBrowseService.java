package io.queen.broker.engine;

import io.queen.broker.engine.segment.CorruptSegmentException;
import io.queen.broker.engine.segment.Frame;
import io.queen.broker.engine.segment.PayloadCipher;
import io.queen.broker.engine.segment.SegmentCodec;
import io.queen.broker.engine.segment.TxnHash;
import io.queen.broker.store.Database;
import io.queen.broker.store.MessageStore;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.logging.Logger;

/**
 * Message browsing (broker/DESIGN.md, Management plane). SQL lists frames by their hash-sidecar
 * rows and derives each one's status from the cursors; the payload, ids and transaction id live
 * only inside the segment blob, so this service fetches each segment of a page once, decodes it and
 * decrypts envelopes.
 *
 * <p>A single message is found by its transaction id's hash among the partition's surviving hash
 * rows; once those are purged it falls back to scanning up to {@link #FALLBACK_SCAN_SEGMENTS} older
 * segments, newest first, comparing transaction ids.
 */
public final class MessageBrowseService {
    private static final Logger LOG = Logger.getLogger(MessageBrowseService.class.getName());

    static final int FALLBACK_SCAN_SEGMENTS = 5000;
    private static final int FALLBACK_PAGE = 100;

    /** The listing's filters; null fields match anything. {@code from}/{@code to} null = the last hour. */
    public record Filter(String queue, String partition, String namespace, String task, String status,
                         Instant from, Instant to, int limit, int offset) {
    }

    /** One listed frame, addressed by (partition, segment base offset, frame index). */
    public record ListedFrame(UUID partitionId, String queue, String partition, String namespace, String task,
                              long baseOffset, int frameIdx, byte[] txnHash, Instant createdAt, String status,
                              int consumedBy, int totalGroups, Instant leaseExpiresAt) {
    }

    /** Whether queue mode and how many named groups consume what was listed or read. */
    public record Mode(boolean hasQueueMode, int namedGroups) {
    }

    /** Where one frame is and where it stands; {@code error} and {@code dlqRetryCount} describe its dead letter. */
    public record Detail(String queue, String partition, String namespace, String task, int leaseTime,
                         int retryLimit, int retryDelay, int ttl, int priority, String status, String error,
                         int dlqRetryCount, boolean hasQueueMode, int namedGroups,
                         Instant queueModeLeaseExpiresAt) {
    }

    public record GroupPosition(String group, boolean consumed, Instant leaseExpiresAt) {
    }

    /** A listed frame; {@code frame} and {@code data} are null when its segment is gone or unreadable. */
    public record Listed(ListedFrame row, Frame frame, byte[] data) {
    }

    public record Page(List<Listed> messages, Mode mode) {
    }

    /** One message read by address: the frame, its plaintext payload, where it is and where it stands. */
    public record Message(Frame frame, byte[] data, Instant createdAt, Detail detail, List<GroupPosition> groups) {
    }

    private record Found(MessageStore.StoredSegment segment, Frame frame, long offset) {
    }

    private final Database database;
    private final PayloadCipher cipher;

    public MessageBrowseService(Database database, PayloadCipher cipher) {
        this.database = database;
        this.cipher = cipher;
    }

    public Page list(UUID tenant, Filter filter) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            List<MessageStore.ListedFrame> rows = MessageStore.list(c, tenant, new MessageStore.Filter(filter.queue(),
                    filter.partition(), filter.namespace(), filter.task(), filter.status(), filter.from(), filter.to(),
                    filter.limit(), filter.offset()));
            MessageStore.Mode mode = MessageStore.mode(c, tenant, filter.queue(), filter.partition());
            Map<UUID, Map<Long, List<Frame>>> decoded = decodeSegments(c, tenant, rows);
            List<Listed> out = new ArrayList<>(rows.size());
            for (MessageStore.ListedFrame row : rows) {
                List<Frame> frames = decoded.getOrDefault(row.partitionId(), Map.of()).get(row.baseOffset());
                Frame f = frames != null && row.frameIdx() < frames.size() ? frames.get(row.frameIdx()) : null;
                out.add(new Listed(listed(row), f, f == null ? null : plaintext(f)));
            }
            return new Page(out, new Mode(mode.hasQueueMode(), mode.namedGroups()));
        }
    }

    /**
     * Null when the partition is not the tenant's or holds no such message any more.
     *
     * @throws CorruptSegmentException when the segment holding the message does not decode
     */
    public Message read(UUID tenant, UUID partitionId, String transactionId) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            Found found = byHash(c, tenant, partitionId, transactionId);
            if (found == null) {
                found = byScan(c, tenant, partitionId, transactionId);
            }
            if (found == null) {
                return null;
            }
            MessageStore.Detail detail = MessageStore.detail(c, tenant, partitionId, found.offset());
            if (detail == null) {
                return null;
            }
            return new Message(found.frame(), plaintext(found.frame()), found.segment().createdAt(), detail(detail),
                    MessageStore.groups(c, tenant, partitionId, found.offset()).stream()
                            .map(g -> new GroupPosition(g.group(), g.consumed(), g.leaseExpiresAt())).toList());
        }
    }

    /** Every segment a page refers to, decoded once, by partition then base offset. */
    private Map<UUID, Map<Long, List<Frame>>> decodeSegments(Connection c, UUID tenant,
                                                             List<MessageStore.ListedFrame> rows) throws SQLException {
        Map<UUID, Set<Long>> wanted = new LinkedHashMap<>();
        for (MessageStore.ListedFrame row : rows) {
            wanted.computeIfAbsent(row.partitionId(), k -> new TreeSet<>()).add(row.baseOffset());
        }
        Map<UUID, Map<Long, List<Frame>>> out = new HashMap<>();
        for (Map.Entry<UUID, Set<Long>> e : wanted.entrySet()) {
            Map<Long, List<Frame>> byBase = new HashMap<>();
            for (MessageStore.StoredSegment s : MessageStore.segments(c, tenant, e.getKey(), List.copyOf(e.getValue()))) {
                try {
                    byBase.put(s.baseOffset(), SegmentCodec.decode(s.blob()));
                } catch (CorruptSegmentException ex) {
                    // One unreadable segment must not hide the rest of the page: its rows list without payload.
                    LOG.warning("message listing: segment " + s.baseOffset() + " of partition " + e.getKey()
                            + " does not decode: " + ex.getMessage());
                }
            }
            out.put(e.getKey(), byBase);
        }
        return out;
    }

    private static Found byHash(Connection c, UUID tenant, UUID partitionId, String transactionId) throws SQLException {
        Long offset = MessageStore.locate(c, tenant, partitionId, TxnHash.of(transactionId));
        if (offset == null) {
            return null;
        }
        MessageStore.StoredSegment s = MessageStore.covering(c, tenant, partitionId, offset);
        if (s == null) {
            return null;
        }
        Frame f = SegmentCodec.decode(s.blob(), (int) (offset - s.baseOffset()), 1).get(0);
        return f.transactionId().equals(transactionId) ? new Found(s, f, offset) : null;
    }

    /** The newest frame with the transaction id among the older segments whose hash rows were purged. */
    private static Found byScan(Connection c, UUID tenant, UUID partitionId, String transactionId) throws SQLException {
        Long before = null;
        int scanned = 0;
        while (scanned < FALLBACK_SCAN_SEGMENTS) {
            List<MessageStore.StoredSegment> page = MessageStore.segmentsBefore(c, tenant, partitionId, before,
                    Math.min(FALLBACK_PAGE, FALLBACK_SCAN_SEGMENTS - scanned));
            for (MessageStore.StoredSegment s : page) {
                List<Frame> frames;
                try {
                    frames = SegmentCodec.decode(s.blob());
                } catch (CorruptSegmentException e) {
                    LOG.warning("message read: skipping segment " + s.baseOffset() + " of partition " + partitionId
                            + ", it does not decode: " + e.getMessage());
                    continue;
                }
                for (int i = frames.size() - 1; i >= 0; i--) {
                    if (frames.get(i).transactionId().equals(transactionId)) {
                        return new Found(s, frames.get(i), s.baseOffset() + i);
                    }
                }
            }
            if (page.size() < FALLBACK_PAGE) {
                return null;
            }
            before = page.get(page.size() - 1).baseOffset();
            scanned += page.size();
        }
        return null;
    }

    private static ListedFrame listed(MessageStore.ListedFrame r) {
        return new ListedFrame(r.partitionId(), r.queue(), r.partition(), r.namespace(), r.task(), r.baseOffset(),
                r.frameIdx(), r.txnHash(), r.createdAt(), r.status(), r.consumedBy(), r.totalGroups(),
                r.leaseExpiresAt());
    }

    private static Detail detail(MessageStore.Detail d) {
        return new Detail(d.queue(), d.partition(), d.namespace(), d.task(), d.leaseTime(), d.retryLimit(),
                d.retryDelay(), d.ttl(), d.priority(), d.status(), d.error(), d.dlqRetryCount(), d.hasQueueMode(),
                d.namedGroups(), d.queueModeLeaseExpiresAt());
    }

    /** The payload as the client sent it: envelopes are decrypted when the key opens them. */
    private byte[] plaintext(Frame f) {
        return cipher.payloadOf(f);
    }
}
