package io.queen.broker.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/** JDBC of the offset fetch: one call of {@code queen.log_fetch_v1} (032_log_fetch), every value bound. */
public final class FetchStore {

    /** Where one entry reads from, and how much compressed segment data it may take. */
    public record Request(String queue, String partition, long offset, int maxBytes) {
    }

    /**
     * One row of the answer: an entry's bounds and error, with one segment to read from (frames
     * [startIdx, startIdx + take) of the blob, the first at offset {@code baseOffset + startIdx}),
     * or no segment ({@code blob} null).
     */
    public record Row(int entry, String error, long high, long logStart, long baseOffset, int startIdx, int take,
                      Instant createdAt, byte[] blob) {
    }

    private FetchStore() {
    }

    public static List<Row> fetch(Connection c, UUID tenant, List<Request> entries, long budgetBytes,
                                  int maxRecordsPerEntry) throws SQLException {
        int n = entries.size();
        String[] queues = new String[n];
        String[] partitions = new String[n];
        Long[] offsets = new Long[n];
        Integer[] maxBytes = new Integer[n];
        for (int i = 0; i < n; i++) {
            Request e = entries.get(i);
            queues[i] = e.queue();
            partitions[i] = e.partition();
            offsets[i] = e.offset();
            maxBytes[i] = e.maxBytes();
        }
        List<Row> rows = new ArrayList<>(n);
        try (PreparedStatement ps = c.prepareStatement("SELECT entry, error, high, log_start, base_offset, start_idx,"
                + " take, created_at, blob FROM queen.log_fetch_v1(?, ?, ?, ?, ?, ?, ?)")) {
            ps.setObject(1, tenant);                                       // p_tenant
            ps.setArray(2, c.createArrayOf("text", queues));               // p_queues
            ps.setArray(3, c.createArrayOf("text", partitions));           // p_partitions
            ps.setArray(4, c.createArrayOf("bigint", offsets));            // p_offsets
            ps.setArray(5, c.createArrayOf("integer", maxBytes));          // p_max_bytes
            ps.setLong(6, budgetBytes);                                    // p_budget
            ps.setInt(7, maxRecordsPerEntry);                              // p_max_records
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    Timestamp created = rs.getTimestamp(8);
                    rows.add(new Row(rs.getInt(1), rs.getString(2), rs.getLong(3), rs.getLong(4), rs.getLong(5),
                            rs.getInt(6), rs.getInt(7), created == null ? null : created.toInstant(), rs.getBytes(9)));
                }
            }
        }
        return rows;
    }
}
