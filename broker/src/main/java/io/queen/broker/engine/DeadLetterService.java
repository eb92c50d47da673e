package io.queen.broker.engine;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.broker.engine.segment.PayloadCipher;
import io.queen.broker.engine.segment.UuidV7;
import io.queen.broker.store.AdminStore;
import io.queen.broker.store.Database;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The dead-letter queue (broker/DESIGN.md, Acks, retries and dead letters): listing with
 * decrypt-on-read, purge by queue, delete by address, and the 1.5 replay (re-push the snapshot
 * through the push path, then delete the address).
 */
public final class DeadLetterService {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final byte[] JSON_NULL = "null".getBytes(StandardCharsets.US_ASCII);

    /** One dead letter as listed, without its payload. */
    public record DeadLetter(UUID id, String transactionId, UUID partitionId, String queue, String partition,
                             String consumerGroup, String error, int retryCount, Instant failedAt) {
    }

    /** A listed dead letter with its payload as served: plaintext when {@code decrypted}, else as stored. */
    public record Listed(DeadLetter row, byte[] data, boolean decrypted) {
    }

    /**
     * A replay that found its row. {@code accepted} is false when the push did not queue the message;
     * the row is then kept and {@code rowRemoved} is false.
     */
    public record Replay(String queue, String partition, PushService.Result pushed, boolean accepted,
                         boolean rowRemoved) {
    }

    /**
     * A replay of one dead-letter row by id. {@code moved}: the push took the message (queued, or
     * buffered for the spool) and the row was removed; otherwise the push answered {@code duplicate}
     * (this row was replayed before) or failed, and the row was kept. {@code id}, {@code consumerGroup}
     * and {@code transactionId} are the row's; {@code queue} and {@code partition} where it was pushed.
     */
    public record ReplayById(UUID id, String consumerGroup, String transactionId, String queue, String partition,
                             PushService.Result pushed, boolean moved, boolean rowRemoved) {
    }

    private final Database database;
    private final PushService push;
    private final PayloadCipher cipher;

    public DeadLetterService(Database database, PushService push, PayloadCipher cipher) {
        this.database = database;
        this.push = push;
        this.cipher = cipher;
    }

    public List<Listed> list(UUID tenant, String queue, String group, int limit, int offset) throws SQLException {
        List<AdminStore.DeadLetter> rows;
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            rows = AdminStore.deadLetters(c, tenant, queue, group, limit, offset);
        }
        List<Listed> out = new ArrayList<>(rows.size());
        for (AdminStore.DeadLetter row : rows) {
            byte[] stored = row.payload() == null ? JSON_NULL : row.payload().getBytes(StandardCharsets.UTF_8);
            byte[] plain = plaintext(stored);
            out.add(new Listed(new DeadLetter(row.id(), row.transactionId(), row.partitionId(), row.queue(),
                    row.partition(), row.consumerGroup(), row.error(), row.retryCount(), row.failedAt()),
                    plain, plain != stored));
        }
        return out;
    }

    public int purge(UUID tenant, String queue, String group) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            return AdminStore.purgeDeadLetters(c, tenant, queue, group);
        }
    }

    /** Dead letters removed at the address, every group's. */
    public int delete(UUID tenant, UUID partitionId, String transactionId) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            return AdminStore.deleteDeadLetters(c, tenant, partitionId, transactionId);
        }
    }

    /** Null when the address holds no dead letter of the tenant. */
    public Replay replay(UUID tenant, UUID partitionId, String transactionId) throws SQLException {
        AdminStore.ReplaySource source;
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            source = AdminStore.replaySource(c, tenant, partitionId, transactionId);
        }
        if (source == null) {
            return null;
        }
        // The snapshot keeps an envelope as stored; push the plaintext so the push path encrypts
        // once, for the queue it lands in.
        byte[] stored = source.payload() == null ? JSON_NULL : source.payload().getBytes(StandardCharsets.UTF_8);
        String txn = freshTransactionId(transactionId);
        // Contract 1.5.3: a re-push with a fresh UUIDv7 transactionId, then a separate delete (1.6 moves one row in one transaction).
        PushService.Result pushed = push.push(tenant, List.of(
                new PushService.Item(source.queue(), source.partition(), compact(plaintext(stored)), txn, null))).get(0);
        boolean accepted = "queued".equals(pushed.status()) || "buffered".equals(pushed.status());
        if (!accepted) {
            return new Replay(source.queue(), source.partition(), pushed, false, false);
        }
        // 1.5 deletes by address, so every group's dead letter of this message goes with it.
        return new Replay(source.queue(), source.partition(), pushed, true, delete(tenant, partitionId, transactionId) > 0);
    }

    /**
     * The 1.6 replay of one row, addressed by its id: re-push its snapshot to its own queue and
     * partition, or to the overrides, then remove this row only (the other groups' dead letters of
     * the message stay). The transaction id is {@code dlq:<row id>}, as the reference broker mints
     * it, so a second replay of a row whose delete did not happen is a dedup duplicate and writes
     * nothing. Unlike the reference's single-transaction move this is push then delete, the path
     * the address replay already takes. Null when the tenant has no row of that id.
     *
     * @param queue     destination queue, null for the row's own
     * @param partition destination partition, null for the row's own
     */
    public ReplayById replayById(UUID tenant, UUID id, String queue, String partition) throws SQLException {
        AdminStore.DeadLetterRow row;
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            row = AdminStore.deadLetterById(c, tenant, id);
        }
        if (row == null) {
            return null;
        }
        String toQueue = queue != null ? queue : row.queue();
        String toPartition = partition != null ? partition : row.partition();
        byte[] stored = row.payload() == null ? JSON_NULL : row.payload().getBytes(StandardCharsets.UTF_8);
        PushService.Result pushed = push.push(tenant, List.of(new PushService.Item(toQueue, toPartition,
                compact(plaintext(stored)), "dlq:" + row.id(), null))).get(0);
        if (!"queued".equals(pushed.status()) && !"buffered".equals(pushed.status())) {
            return new ReplayById(row.id(), row.consumerGroup(), row.transactionId(), toQueue, toPartition, pushed,
                    false, false);
        }
        int removed;
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            removed = AdminStore.deleteDeadLetterById(c, tenant, id);
        }
        return new ReplayById(row.id(), row.consumerGroup(), row.transactionId(), toQueue, toPartition, pushed,
                true, removed > 0);
    }

    /** Plaintext of an envelope when a key is loaded and it decrypts; otherwise the same array. */
    private byte[] plaintext(byte[] stored) {
        if (!cipher.isEnabled() || !PayloadCipher.looksLikeEnvelope(stored)) {
            return stored;
        }
        return cipher.decryptIfEnvelope(stored);
    }

    /** The payload as compact JSON, as /push stores it; text that is not JSON replays as null (reference). */
    private static byte[] compact(byte[] json) {
        try {
            return MAPPER.writeValueAsBytes(MAPPER.readTree(json));
        } catch (IOException e) {
            return JSON_NULL;
        }
    }

    private static String freshTransactionId(String original) {
        String txn = UuidV7.next().toString();
        while (txn.equals(original)) {
            txn = UuidV7.next().toString();
        }
        return txn;
    }
}
