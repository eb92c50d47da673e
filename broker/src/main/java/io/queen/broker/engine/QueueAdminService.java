package io.queen.broker.engine;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.queen.broker.store.Database;
import io.queen.broker.store.QueueAdminStore;

import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.UUID;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Queue administration (broker/DESIGN.md, Management plane): configure, delete, the resources listings and
 * partition discovery. Each operation is one procedure call. Configure and delete drop the
 * queue's entries from this broker's {@link QueueCatalog} once they committed, so the next push
 * here reads the new encryption flag and dedup window, or re-creates a deleted queue under a new
 * id; other brokers see the change when their 5 s entries expire.
 */
public final class QueueAdminService {
    private static final Logger LOG = Logger.getLogger(QueueAdminService.class.getName());
    private static final ObjectMapper MAPPER = new ObjectMapper();

    /** Partition discovery's slack for stats propagation between backends (a PostgreSQL property, not a knob). */
    private static final int SAFE_TIME_GUARD_SECONDS = 5;
    /**
     * The degraded safeTime floor, QUEEN_FETCH_SAFE_FLOOR_MS's default rounded up to seconds; it must
     * exceed any write statement's timeout.
     */
    public static final int DEFAULT_SAFE_FLOOR_SECONDS = 30;

    /** A configure the procedure answered: the echo, or a refusal naming the option (nothing written). */
    public record Configured(JsonNode body, boolean refused) {
    }

    /** A delete's body; {@code existed} is false when the tenant had no such queue. */
    public record Deleted(JsonNode body, boolean existed) {
    }

    /** One entry of a partition discovery call; {@code since} is parsed by PostgreSQL. */
    public record ChangedEntry(String queue, String since, String after, int limit) {
    }

    /** A partition-discovery {@code since} PostgreSQL could not read as a timestamp. */
    public static final class InvalidSinceException extends RuntimeException {
        InvalidSinceException(String message) {
            super(message);
        }
    }

    private final Database database;
    private final QueueCatalog catalog;
    private final BiConsumer<UUID, String> announceChange;
    private final Consumer<List<UUID>> partitionsDeleted;
    private final int safeFloorSeconds;

    /**
     * @param announceChange tells other brokers a queue's options changed or it is gone (they cache them)
     * @param partitionsDeleted told a deleted queue's partition ids once the delete committed (the
     *                          push path drops its dedup entries of them)
     * @param safeFloorSeconds the degraded safeTime floor of partition discovery
     */
    public QueueAdminService(Database database, QueueCatalog catalog, BiConsumer<UUID, String> announceChange,
                             Consumer<List<UUID>> partitionsDeleted, int safeFloorSeconds) {
        this.database = database;
        this.catalog = catalog;
        this.announceChange = announceChange;
        this.partitionsDeleted = partitionsDeleted;
        this.safeFloorSeconds = safeFloorSeconds;
    }

    /**
     * @param options the option bag, without the {@code replace} directive
     * @param replace true: every option absent from the bag returns to its default; false: it keeps its value
     */
    public Configured configure(UUID tenant, String queue, ObjectNode options, boolean replace) throws SQLException {
        ObjectNode bag = options.deepCopy();
        bag.put("replace", replace);
        JsonNode body;
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            body = parse(QueueAdminStore.configure(c, tenant, queue, bag.toString()));
        }
        if (body.hasNonNull("error")) {
            LOG.info(() -> "configure of queue '" + queue + "' (tenant " + tenant + ") refused: " + body.get("error").asText());
            return new Configured(body, true);
        }
        catalog.evict(tenant, queue);
        announceChange.accept(tenant, queue);
        LOG.info(() -> "configured queue '" + queue + "' (tenant " + tenant + ", " + (replace ? "replace" : "merge")
                + "): " + body.get("options"));
        return new Configured(body, false);
    }

    public Deleted delete(UUID tenant, String queue) throws SQLException {
        JsonNode body;
        List<UUID> partitions;
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            // Read before the delete, in its own statement: a partition created in between keeps its
            // dedup entries until they age out, which costs budget, never a wrong answer (a
            // re-created queue has new partition ids).
            partitions = QueueAdminStore.partitionIds(c, tenant, queue);
            body = parse(QueueAdminStore.deleteQueue(c, tenant, queue));
        }
        catalog.evict(tenant, queue);
        announceChange.accept(tenant, queue);
        boolean existed = body.path("existed").asBoolean(false);
        if (existed) {
            partitionsDeleted.accept(partitions);
            LOG.info(() -> "deleted queue '" + queue + "' (tenant " + tenant + ") with all its " + partitions.size()
                    + " partitions and their messages");
        }
        return new Deleted(body, existed);
    }

    /**
     * The queue list with the tenant's KV/timer usage fields; those are left out, not zeroed,
     * when the usage read fails, so a reader can tell "unknown" from "none".
     */
    public JsonNode list(UUID tenant, boolean live) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            ObjectNode body = (ObjectNode) parse(QueueAdminStore.queueList(c, tenant, live));
            try {
                QueueAdminStore.KvUsage usage = QueueAdminStore.kvUsage(c, tenant);
                body.put("kvRows", usage.kvRows()).put("kvBytes", usage.kvBytes())
                        .put("timerRows", usage.timerRows()).put("timerBytes", usage.timerBytes());
            } catch (SQLException e) {
                LOG.log(Level.WARNING, "queue list of tenant " + tenant + ": KV/timer usage unavailable,"
                        + " leaving the quota fields out", e);
            }
            return body;
        }
    }

    /** Null when the tenant has no such queue. */
    public JsonNode detail(UUID tenant, String queue) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            return parseNullable(QueueAdminStore.queueDetail(c, tenant, queue));
        }
    }

    /** Null when the tenant has no such queue; {@code group} null = the queue's worst cursor. */
    public JsonNode depth(UUID tenant, String queue, String group) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            return parseNullable(QueueAdminStore.queueDepth(c, tenant, queue, group));
        }
    }

    public JsonNode namespaces(UUID tenant) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            return parse(QueueAdminStore.namespaces(c, tenant));
        }
    }

    public JsonNode tasks(UUID tenant) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            return parse(QueueAdminStore.tasks(c, tenant));
        }
    }

    /**
     * The tenant's own queues; cell-wide for the default tenant only when {@code cellWide} (no tenants
     * but the default one, so nothing of another tenant can be counted).
     */
    public JsonNode overview(UUID tenant, boolean cellWide) throws SQLException {
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            return parse(QueueAdminStore.overview(c, tenant, cellWide));
        }
    }

    /**
     * One autocommit statement at READ COMMITTED, which the procedure's safeTime argument needs.
     *
     * @throws InvalidSinceException when an entry's {@code since} is not a timestamp
     */
    public JsonNode partitionsChanged(UUID tenant, List<ChangedEntry> entries) throws SQLException {
        List<QueueAdminStore.ChangedEntry> rows = entries.stream()
                .map(e -> new QueueAdminStore.ChangedEntry(e.queue(), e.since(), e.after(), e.limit())).toList();
        try (Connection c = database.connection()) {
            c.setAutoCommit(true);
            return parse(QueueAdminStore.partitionsChanged(c, tenant, rows, SAFE_TIME_GUARD_SECONDS,
                    safeFloorSeconds));
        } catch (SQLException e) {
            if (QueueAdminStore.isBadTimestamp(e)) {
                throw new InvalidSinceException("since is not a timestamp: " + e.getMessage());
            }
            throw e;
        }
    }

    private static JsonNode parseNullable(String json) {
        return json == null ? null : parse(json);
    }

    private static JsonNode parse(String json) {
        try {
            return MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException("a queue procedure returned unreadable JSON", e);
        }
    }
}
