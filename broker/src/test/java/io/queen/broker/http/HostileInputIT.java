package io.queen.broker.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.broker.Broker;
import io.queen.broker.config.DatabaseSettings;
import io.queen.broker.support.BrokerFixture;
import io.queen.broker.support.HttpProbe;
import io.queen.broker.support.RawHttp;
import io.queen.broker.support.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The hostile corpus ({@link HostileCorpus}) against a real broker: no case is answered 5xx or
 * with a reset, every 4xx carries a JSON error, no answer carries database or Java text, and the
 * broker serves and delivers exactly what it accepted afterwards. Prints the answers by family
 * and class.
 */
class HostileInputIT {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    /** Words only the database, the JDBC driver, the pool or the JVM would put in an answer. */
    static final Pattern INTERNAL_TEXT = Pattern.compile(
            "(?-i:ERROR:)|(?i)(SQLSTATE|PSQLException|org\\.postgresql|postgres|java\\.|jdk\\.|Exception|hikari|\\bpool\\b"
                    + "|violates|invalid byte sequence|syntax error|relation \"|column \"|stack|\\bat io\\.|queen\\.[a-z_]+_v\\d)");

    private static DatabaseSettings db;
    private static Broker broker;
    private static HttpProbe http;
    private static RawHttp raw;
    private static HostileCorpus.Seed seed;

    @BeforeAll
    static void start() {
        db = TestPostgres.freshDatabase("hostile");
        broker = BrokerFixture.start(db, Map.of("QUEEN_TENANCY_HEADER", "true", "QUEEN_KV_TRUSTED_PROXY", "true",
                "QUEEN_MAX_BODY_BYTES", String.valueOf(1024 * 1024)));
        http = new HttpProbe(broker.port());
        raw = new RawHttp(broker.port());
        http.post("/api/v1/push", "{\"items\":[{\"queue\":\"hq\",\"partition\":\"p\",\"payload\":{\"n\":0},"
                + "\"transactionId\":\"seed-0\"},{\"queue\":\"hq\",\"partition\":\"p\",\"payload\":{\"n\":1},"
                + "\"transactionId\":\"seed-1\"}]}");
        JsonNode popped = http.get("/api/v1/pop/queue/hq?batch=1&wait=false&consumerGroup=seedgroup&subscriptionMode=all").json()
                .get("messages").get(0);
        seed = new HostileCorpus.Seed(popped.get("partitionId").asText(), popped.get("transactionId").asText(),
                popped.get("leaseId").asText());
    }

    @AfterAll
    static void stop() {
        if (broker != null) {
            broker.close();
        }
    }

    record Outcome(HostileCorpus.Case c, RawHttp.Answer answer, String problem) {
    }

    @Test
    void everyHostileRequestIsAnsweredAsTheClientsMistake() {
        List<HostileCorpus.Case> corpus = HostileCorpus.build(seed);
        List<Outcome> outcomes = new ArrayList<>();
        for (HostileCorpus.Case c : corpus) {
            RawHttp.Answer a = c.raw() != null ? raw.exchange(c.raw()) : raw.send(c.method(), c.target(), c.headers(), c.body());
            String problem = problem(a);
            if (problem == null && c.family().equals("unknown-route")
                    && (a.status() != 404 || !a.body().contains("\"code\":\"no_such_route\""))) {
                problem = "an unknown route is the JSON 404 of /api/*";
            }
            outcomes.add(new Outcome(c, a, problem));
        }
        // A body over QUEEN_MAX_BODY_BYTES: the client that stops when answered, and the one that
        // goes on sending regardless, both read the 413.
        for (boolean stop : new boolean[]{true, false}) {
            RawHttp.Answer oversize = raw.streamLargeBody("/api/v1/push", 8L * 1024 * 1024, stop);
            HostileCorpus.Case oversizeCase = new HostileCorpus.Case("framing",
                    stop ? "body-over-limit" : "body-over-limit-still-sending", "POST", "/api/v1/push", Map.of(), null, null);
            String oversizeProblem = problem(oversize);
            if (oversizeProblem == null && oversize.status() != 413) {
                oversizeProblem = "expected 413, got " + oversize.status();
            }
            outcomes.add(new Outcome(oversizeCase, oversize, oversizeProblem));
        }

        print(outcomes);
        List<String> problems = outcomes.stream().filter(o -> o.problem() != null)
                .map(o -> o.c().describe() + " -> " + o.answer().status() + " " + HostileCorpus.abbreviate(o.answer().body())
                        + ": " + o.problem())
                .toList();
        assertTrue(problems.isEmpty(), problems.size() + " of " + outcomes.size() + " cases answered wrongly:\n"
                + String.join("\n", problems));

        // Nothing the broker had accepted is lost, and it serves as before.
        assertEquals(200, http.get("/health").status());
        HttpProbe.Reply rest = http.get("/api/v1/pop/queue/hq/partition/p?batch=1000&wait=false&consumerGroup=aftercheck&subscriptionMode=all");
        assertEquals(200, rest.status(), rest.body());
        List<Integer> seen = new ArrayList<>();
        rest.json().get("messages").forEach(m -> seen.add(m.path("data").path("n").asInt(-1)));
        assertTrue(seen.containsAll(List.of(0, 1)), "the seeded messages are still there: " + seen);
    }

    /** Null when the answer is what a client's mistake deserves, else what is wrong with it. */
    static String problem(RawHttp.Answer a) {
        if (!a.answered()) {
            return "no answer (connection reset or closed): " + HostileCorpus.abbreviate(a.body());
        }
        if (a.status() >= 500) {
            return "server error";
        }
        if (INTERNAL_TEXT.matcher(a.body()).find()) {
            return "internal text in the answer";
        }
        if (a.status() >= 400) {
            try {
                JsonNode body = MAPPER.readTree(a.body());
                if (body == null || !body.path("error").isTextual() || body.path("error").asText().isBlank()) {
                    return "4xx without a JSON error";
                }
            } catch (IOException e) {
                return "4xx body is not JSON";
            }
        }
        return null;
    }

    private static void print(List<Outcome> outcomes) {
        Map<String, int[]> byFamily = new TreeMap<>();
        for (Outcome o : outcomes) {
            int[] counts = byFamily.computeIfAbsent(o.c().family(), k -> new int[5]);
            int status = o.answer().status();
            counts[status < 0 ? 4 : status >= 500 ? 3 : status >= 400 ? 2 : status >= 300 ? 1 : 0]++;
        }
        StringBuilder table = new StringBuilder("hostile corpus: " + outcomes.size() + " cases\n")
                .append(String.format("%-16s %5s %5s %5s %5s %8s%n", "family", "2xx", "3xx", "4xx", "5xx", "no-answer"));
        int[] total = new int[5];
        byFamily.forEach((family, c) -> {
            table.append(String.format("%-16s %5d %5d %5d %5d %8d%n", family, c[0], c[1], c[2], c[3], c[4]));
            for (int i = 0; i < 5; i++) {
                total[i] += c[i];
            }
        });
        table.append(String.format("%-16s %5d %5d %5d %5d %8d%n", "total", total[0], total[1], total[2], total[3], total[4]));
        long leaks = outcomes.stream().filter(o -> "internal text in the answer".equals(o.problem())).count();
        table.append("answers with internal text: ").append(leaks);
        System.out.println(table);
    }
}
