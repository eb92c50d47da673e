package io.queen.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * {@code bin/bench --kv}: for each batch size, puts then gets through {@code POST /api/v1/kv} from
 * {@code --clients} closed-loop clients, each phase followed by the same calls straight over JDBC
 * ({@link KvCeiling}), so broker and ceiling run minutes apart at most. Every key exists before the
 * first phase (written once, unmeasured, on both sides), so a put is an update and a get a hit.
 * A call that is not applied or found in full counts as failed.
 */
final class KvBench {
    private static final byte[] APPLIED = "\"applied\":true".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] FOUND = "\"found\":true".getBytes(StandardCharsets.US_ASCII);
    private static final int FILL_BATCH = 100;
    private static final int TIMEOUT_MS = 60_000;

    private KvBench() {
    }

    /** Runs every phase and prints the table; true when no call failed. */
    static boolean run(SurfaceOptions o, PgServer.Database db, BrokerHttp http)
            throws IOException, SQLException, InterruptedException {
        int perClient = o.kvKeys() / o.clients();
        System.out.printf("KV: %d clients, %,d keys (%,d each, forever), values of about %d B, batches %s; "
                        + "%d s warm-up + %d s measured per phase%n", o.clients(), perClient * o.clients(), perClient,
                KvRequests.value(0).length(), o.kvBatches(), o.warmupSeconds(), o.seconds());
        fill(o, db, http, perClient);
        FigureTable table = new FigureTable("phase", "batch", "calls/s", "ops/s", "p50 ms", "p99 ms", "max ms",
                "failed", "broker/JDBC");
        List<String> errors = new ArrayList<>();
        long failed = 0;
        for (int batch : o.kvBatches()) {
            for (boolean put : new boolean[] {true, false}) {
                String op = put ? "put" : "get";
                TimedClients.Outcome broker = TimedClients.run("broker " + op + " batch " + batch, "ops", o.clients(),
                        o.warmupSeconds(), o.seconds(), c -> brokerClient(http, c, perClient, batch, put));
                TimedClients.Outcome jdbc = TimedClients.run("JDBC " + op + " batch " + batch, "ops", o.clients(),
                        o.warmupSeconds(), o.seconds(), c -> jdbcClient(db, c, perClient, batch, put));
                addRow(table, "broker " + op, batch, broker, String.format("%.0f%%",
                        100 * broker.opsPerSecond() / jdbc.opsPerSecond()));
                addRow(table, "JDBC " + op + " (ceiling)", batch, jdbc, "");
                for (TimedClients.Outcome r : List.of(broker, jdbc)) {
                    failed += r.failures();
                    if (r.firstError() != null) {
                        errors.add(op + " batch " + batch + ": " + r.firstError());
                    }
                }
            }
        }
        System.out.printf("%n== KV: %d clients, ops = single gets or puts, latency = one call ==%n", o.clients());
        System.out.print(table.render());
        errors.forEach(e -> System.out.println("first error, " + e));
        return failed == 0;
    }

    private static void addRow(FigureTable table, String phase, int batch, TimedClients.Outcome r, String ratio) {
        table.row(phase, Integer.toString(batch), FigureTable.rate(r.callsPerSecond()), FigureTable.rate(r.opsPerSecond()),
                FigureTable.ms(r.latencies().percentileMs(50)), FigureTable.ms(r.latencies().percentileMs(99)),
                FigureTable.ms(r.latencies().percentileMs(100)), Long.toString(r.failures()), ratio);
    }

    /** Writes every key once through the broker and into the ceiling's table. */
    private static void fill(SurfaceOptions o, PgServer.Database db, BrokerHttp http, int perClient)
            throws IOException, SQLException {
        KvCeiling.createTable(db);
        int batch = Math.min(FILL_BATCH, perClient);
        try (KvCeiling.Client jdbc = new KvCeiling.Client(db)) {
            for (int c = 0; c < o.clients(); c++) {
                for (int start = 0; start < perClient; start += batch) {
                    List<String> keys = KvRequests.keys(c, perClient, start, Math.min(batch, perClient - start));
                    brokerCall(http, KvRequests.puts(keys, 0), APPLIED, keys.size());
                    jdbc.put(keys, 0);
                }
            }
        }
        System.out.printf("  wrote %,d keys through the broker and %,d over JDBC (not measured)%n",
                perClient * o.clients(), perClient * o.clients());
    }

    private static TimedClients.Client brokerClient(BrokerHttp http, int client, int perClient, int batch,
                                                    boolean put) {
        SplittableRandom random = new SplittableRandom(client);
        return (seq, measured) -> {
            List<String> keys = KvRequests.keys(client, perClient, random.nextInt(perClient), batch);
            brokerCall(http, put ? KvRequests.puts(keys, seq) : KvRequests.gets(keys), put ? APPLIED : FOUND, batch);
            return batch;
        };
    }

    private static TimedClients.Client jdbcClient(PgServer.Database db, int client, int perClient, int batch,
                                                  boolean put) throws SQLException {
        SplittableRandom random = new SplittableRandom(client);
        KvCeiling.Client jdbc = new KvCeiling.Client(db);
        return new TimedClients.Client() {
            @Override
            public int call(long seq, boolean measured) throws SQLException {
                List<String> keys = KvRequests.keys(client, perClient, random.nextInt(perClient), batch);
                int rows = put ? jdbc.put(keys, seq) : jdbc.get(keys);
                if (rows != batch) {
                    throw new SQLException(rows + " of " + batch + " rows " + (put ? "written" : "found"));
                }
                return batch;
            }

            @Override
            public void close() throws SQLException {
                jdbc.close();
            }
        };
    }

    /** One KV call; an IOException unless it answered 200 with {@code expect} found in it {@code n} times. */
    private static void brokerCall(BrokerHttp http, String body, byte[] expect, int n) throws IOException {
        Http1Connection.Response res = http.call("POST", "/api/v1/kv", body.getBytes(StandardCharsets.UTF_8),
                TIMEOUT_MS);
        if (res.status() != 200 || BrokerHttp.count(res.body(), expect) != n) {
            String text = new String(res.body(), StandardCharsets.UTF_8);
            throw new IOException("POST /api/v1/kv answered " + res.status() + ": "
                    + (text.length() > 300 ? text.substring(0, 300) + "..." : text));
        }
    }
}
