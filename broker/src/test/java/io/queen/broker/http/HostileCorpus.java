package io.queen.broker.http;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Requests a hostile or broken client sends, one per route family and defect class: every name the
 * broker takes (in a body, a path segment, a query parameter or a header) given a NUL, a lone
 * surrogate, bytes that are not UTF-8, more characters than the schema's columns hold, or the wrong
 * JSON type; and HTTP framing a client library would never produce. Each case is answered by the
 * broker as a client's mistake: a 4xx with a JSON error, or a 2xx when the value is merely unknown.
 *
 * <p>Templates hold {@code $V} (a JSON value, inserted as raw JSON text) or {@code $P} (a URL
 * fragment, inserted already percent-encoded), and {@code $PID}, {@code $TXN}, {@code $LEASE} for
 * a real message's partition id, transaction id and lease.
 */
final class HostileCorpus {
    record Case(String family, String defect, String method, String target, Map<String, String> headers, byte[] body,
                byte[] raw) {
        String describe() {
            return family + "/" + defect + " " + method + " " + abbreviate(target);
        }
    }

    /** Known values the templates refer to. */
    record Seed(String partitionId, String transactionId, String leaseId) {
    }

    private static final String LONG_300 = "x".repeat(300);
    private static final String LONG_3000 = "y".repeat(3000);

    /** A defect as a JSON value and, for URL slots, as a percent-encoded fragment. */
    record Defect(String name, String json, String url) {
    }

    static final List<Defect> STRING_DEFECTS = List.of(
            new Defect("nul", "\"a\\u0000b\"", "a%00b"),
            new Defect("lone-surrogate", "\"a\\ud800b\"", "a%ED%A0%80b"),
            new Defect("invalid-utf8", null, "a%FF%FEb"),
            new Defect("long-300", "\"" + LONG_300 + "\"", LONG_300),
            new Defect("long-3000", "\"" + LONG_3000 + "\"", LONG_3000),
            new Defect("long-multibyte", "\"" + "\u00e9".repeat(1100) + "\"", "%C3%A9".repeat(1100)),
            new Defect("wrong-type-number", "12345", null),
            new Defect("wrong-type-object", "{\"a\":[1]}", null),
            new Defect("wrong-type-array", "[\"a\"]", null),
            new Defect("control-chars", "\"a\\u0001\\u001f\\u007fb\"", "a%01%1F%7Fb"));

    private final Seed seed;
    private final List<Case> cases = new ArrayList<>();

    private HostileCorpus(Seed seed) {
        this.seed = seed;
    }

    static List<Case> build(Seed seed) {
        HostileCorpus c = new HostileCorpus(seed);
        c.push();
        c.pop();
        c.ack();
        c.transaction();
        c.configure();
        c.resources();
        c.consumerGroups();
        c.deadLetters();
        c.messages();
        c.traces();
        c.status();
        c.system();
        c.fetch();
        c.tenancy();
        c.framing();
        return c.cases;
    }

    // ---------------------------------------------------------------- families

    private void push() {
        body("push", "POST", "/api/v1/push", "{\"items\":[{\"queue\":$V,\"partition\":\"p\",\"payload\":{\"a\":1}}]}");
        body("push", "POST", "/api/v1/push", "{\"items\":[{\"queue\":\"hq\",\"partition\":$V,\"payload\":1}]}");
        body("push", "POST", "/api/v1/push", "{\"items\":[{\"queue\":\"hq\",\"partition\":\"p\",\"payload\":1,\"transactionId\":$V}]}");
        body("push", "POST", "/api/v1/push", "{\"items\":[{\"queue\":\"hq\",\"partition\":\"p\",\"payload\":1,\"traceId\":$V}]}");
        body("push", "POST", "/api/v1/push", "{\"items\":[{\"queue\":\"hq\",\"partition\":\"p\",\"payload\":{\"k\":$V}}]}");
        body("push", "POST", "/api/v1/push", "{\"items\":$V}");
        body("push", "POST", "/api/v1/push", "{\"items\":[$V]}");
    }

    private void pop() {
        url("pop", "GET", "/api/v1/pop/queue/$P?wait=false");
        url("pop", "GET", "/api/v1/pop/queue/hq/partition/$P?wait=false");
        url("pop", "GET", "/api/v1/pop/queue/hq?wait=false&consumerGroup=$P");
        url("pop", "GET", "/api/v1/pop/queue/hq?wait=false&consumerGroup=cg&subscriptionMode=$P");
        url("pop", "GET", "/api/v1/pop/queue/hq?wait=false&consumerGroup=cg2&subscriptionFrom=$P");
        url("pop", "GET", "/api/v1/pop?wait=false&namespace=$P");
        url("pop", "GET", "/api/v1/pop?wait=false&task=$P");
        url("pop", "GET", "/api/v1/pop/queue/hq?wait=false&batch=$P");
        url("pop", "GET", "/api/v1/pop/queue/hq?wait=false&leaseSeconds=$P");
        url("pop", "GET", "/api/v1/pop/queue/hq?timeout=$P");
    }

    private void ack() {
        body("ack", "POST", "/api/v1/ack", "{\"transactionId\":$V,\"partitionId\":\"$PID\",\"status\":\"completed\"}");
        body("ack", "POST", "/api/v1/ack", "{\"transactionId\":\"$TXN\",\"partitionId\":$V,\"status\":\"completed\"}");
        body("ack", "POST", "/api/v1/ack", "{\"transactionId\":\"nope\",\"partitionId\":\"$PID\",\"leaseId\":$V,\"status\":\"completed\"}");
        body("ack", "POST", "/api/v1/ack", "{\"transactionId\":\"nope\",\"partitionId\":\"$PID\",\"consumerGroup\":$V,\"status\":\"completed\"}");
        body("ack", "POST", "/api/v1/ack", "{\"transactionId\":\"nope\",\"partitionId\":\"$PID\",\"status\":$V}");
        body("ack", "POST", "/api/v1/ack", "{\"transactionId\":\"nope\",\"partitionId\":\"$PID\",\"status\":\"failed\",\"error\":$V}");
        body("ack", "POST", "/api/v1/ack/batch", "{\"acknowledgments\":[{\"transactionId\":$V,\"partitionId\":\"$PID\",\"status\":\"completed\"}]}");
        body("ack", "POST", "/api/v1/ack/batch", "{\"acknowledgments\":[{\"transactionId\":\"nope\",\"partitionId\":$V,\"status\":\"completed\"}]}");
        body("ack", "POST", "/api/v1/ack/batch", "{\"acknowledgments\":[{\"transactionId\":\"nope\",\"partitionId\":\"$PID\",\"leaseId\":$V,\"status\":\"completed\"}]}");
        body("ack", "POST", "/api/v1/ack/batch", "{\"consumerGroup\":$V,\"acknowledgments\":[{\"transactionId\":\"nope\",\"partitionId\":\"$PID\",\"status\":\"completed\"}]}");
        body("ack", "POST", "/api/v1/ack/batch", "{\"acknowledgments\":$V}");
        url("lease", "POST", "/api/v1/lease/$P/extend", "{\"seconds\":30}");
        body("lease", "POST", "/api/v1/lease/$LEASE/extend", "{\"seconds\":$V}");
    }

    private void transaction() {
        String ack = "{\"type\":\"ack\",\"transactionId\":%s,\"partitionId\":%s,\"status\":\"completed\"%s}";
        body("transaction", "POST", "/api/v1/transaction",
                "{\"operations\":[{\"type\":\"push\",\"items\":[{\"queue\":$V,\"partition\":\"p\",\"payload\":1}]}]}");
        body("transaction", "POST", "/api/v1/transaction",
                "{\"operations\":[{\"type\":\"push\",\"items\":[{\"queue\":\"hq\",\"partition\":$V,\"payload\":1}]}]}");
        body("transaction", "POST", "/api/v1/transaction",
                "{\"operations\":[{\"type\":\"push\",\"items\":[{\"queue\":\"hq\",\"payload\":1,\"transactionId\":$V}]}]}");
        body("transaction", "POST", "/api/v1/transaction",
                "{\"operations\":[" + ack.formatted("$V", "\"$PID\"", "") + "]}");
        body("transaction", "POST", "/api/v1/transaction",
                "{\"operations\":[" + ack.formatted("\"nope\"", "$V", "") + "]}");
        body("transaction", "POST", "/api/v1/transaction",
                "{\"operations\":[" + ack.formatted("\"nope\"", "\"$PID\"", ",\"consumerGroup\":$V") + "]}");
        body("transaction", "POST", "/api/v1/transaction", "{\"operations\":[{\"type\":$V}]}");
        body("transaction", "POST", "/api/v1/transaction", "{\"operations\":[],\"requiredLeases\":[$V]}");
        body("transaction", "POST", "/api/v1/transaction", "{\"operations\":$V}");
    }

    private void configure() {
        body("configure", "POST", "/api/v1/configure", "{\"queue\":$V}");
        body("configure", "POST", "/api/v1/configure", "{\"queue\":\"hq2\",\"namespace\":$V}");
        body("configure", "POST", "/api/v1/configure", "{\"queue\":\"hq2\",\"task\":$V}");
        body("configure", "POST", "/api/v1/configure", "{\"queue\":\"hq2\",\"options\":{\"leaseTime\":$V}}");
        body("configure", "POST", "/api/v1/configure", "{\"queue\":\"hq2\",\"options\":$V}");
        body("configure", "POST", "/api/v1/partitions/changed", "{\"entries\":[{\"queue\":$V}]}");
    }

    private void resources() {
        url("resources", "GET", "/api/v1/resources/queues/$P");
        url("resources", "GET", "/api/v1/resources/queues/$P/depth");
        url("resources", "GET", "/api/v1/resources/queues/hq/depth?group=$P");
        url("resources", "DELETE", "/api/v1/resources/queues/$P");
        url("resources", "GET", "/api/v1/resources/queues?namespace=$P");
        url("resources", "GET", "/api/v1/resources/namespaces?namespace=$P");
        url("resources", "GET", "/api/v1/resources/tasks?task=$P");
    }

    private void consumerGroups() {
        url("consumer-groups", "GET", "/api/v1/consumer-groups/$P");
        url("consumer-groups", "DELETE", "/api/v1/consumer-groups/$P");
        url("consumer-groups", "DELETE", "/api/v1/consumer-groups/cg/queues/$P");
        url("consumer-groups", "GET", "/api/v1/consumer-groups/lagging?minLagSeconds=$P");
        url("consumer-groups", "POST", "/api/v1/consumer-groups/$P/queues/hq/seek", "{\"toEnd\":true}");
        url("consumer-groups", "POST", "/api/v1/consumer-groups/cg/queues/$P/seek", "{\"toEnd\":true}");
        url("consumer-groups", "POST", "/api/v1/consumer-groups/cg/queues/hq/partitions/$P/seek", "{\"toEnd\":true}");
        body("consumer-groups", "POST", "/api/v1/consumer-groups/cg/queues/hq/seek", "{\"timestamp\":$V}");
        url("consumer-groups", "POST", "/api/v1/consumer-groups/$P/subscription", "{\"subscriptionTimestamp\":\"2020-01-01T00:00:00Z\"}");
        body("consumer-groups", "POST", "/api/v1/consumer-groups/cg/subscription", "{\"subscriptionTimestamp\":$V}");
        body("consumer-groups", "POST", "/api/v1/consumer-groups/cg/subscription", "{\"queue\":$V,\"subscriptionTimestamp\":\"2020-01-01T00:00:00Z\"}");
    }

    private void deadLetters() {
        url("dlq", "GET", "/api/v1/dlq?queue=$P");
        url("dlq", "GET", "/api/v1/dlq?consumerGroup=$P");
        url("dlq", "GET", "/api/v1/dlq?partition=$P");
        url("dlq", "DELETE", "/api/v1/dlq?queue=$P");
        url("dlq", "DELETE", "/api/v1/messages/$P/$TXN");
        url("dlq", "DELETE", "/api/v1/messages/$PID/$P");
        url("dlq", "POST", "/api/v1/messages/$P/$TXN/retry", "{}");
        url("dlq", "POST", "/api/v1/messages/$PID/$P/retry", "{}");
    }

    private void messages() {
        url("messages", "GET", "/api/v1/messages?queue=$P");
        url("messages", "GET", "/api/v1/messages?queue=hq&partition=$P");
        url("messages", "GET", "/api/v1/messages?ns=$P");
        url("messages", "GET", "/api/v1/messages?namespace=$P");
        url("messages", "GET", "/api/v1/messages?task=$P");
        url("messages", "GET", "/api/v1/messages?status=$P");
        url("messages", "GET", "/api/v1/messages?limit=$P");
        url("messages", "GET", "/api/v1/messages/$P/$TXN");
        url("messages", "GET", "/api/v1/messages/$PID/$P");
    }

    private void traces() {
        body("traces", "POST", "/api/v1/traces", "{\"partitionId\":\"$PID\",\"transactionId\":\"$TXN\",\"traceNames\":[$V],\"data\":{\"a\":1}}");
        body("traces", "POST", "/api/v1/traces", "{\"partitionId\":\"$PID\",\"transactionId\":\"$TXN\",\"traceName\":$V,\"data\":{\"a\":1}}");
        body("traces", "POST", "/api/v1/traces", "{\"partitionId\":\"$PID\",\"transactionId\":$V,\"data\":{\"a\":1}}");
        body("traces", "POST", "/api/v1/traces", "{\"partitionId\":$V,\"transactionId\":\"$TXN\",\"data\":{\"a\":1}}");
        body("traces", "POST", "/api/v1/traces", "{\"partitionId\":\"$PID\",\"transactionId\":\"$TXN\",\"data\":$V}");
        body("traces", "POST", "/api/v1/traces", "{\"partitionId\":\"$PID\",\"transactionId\":\"$TXN\",\"data\":{\"k\":$V}}");
        body("traces", "POST", "/api/v1/traces", "{\"partitionId\":\"$PID\",\"transactionId\":\"$TXN\",\"traceNames\":$V,\"data\":{}}");
        url("traces", "GET", "/api/v1/traces/by-name/$P");
        url("traces", "GET", "/api/v1/traces/$P/$TXN");
        url("traces", "GET", "/api/v1/traces/$PID/$P");
        url("traces", "GET", "/api/v1/traces/names?limit=$P");
    }

    private void status() {
        url("status", "GET", "/api/v1/status/queues/$P");
        url("status", "GET", "/api/v1/status/queues?queue=$P");
        url("status", "GET", "/api/v1/status/queues?namespace=$P");
        url("status", "GET", "/api/v1/status/queues?task=$P");
        url("status", "GET", "/api/v1/status?queue=$P");
        url("status", "GET", "/api/v1/status?interval=$P");
        url("status", "GET", "/api/v1/status/analytics?queue=$P");
        url("analytics", "GET", "/api/v1/analytics/retention?queue=$P");
        url("analytics", "GET", "/api/v1/analytics/queue-lag?queue=$P");
        url("analytics", "GET", "/api/v1/analytics/queue-ops?queue=$P");
        url("analytics", "GET", "/api/v1/analytics/system-metrics?hostname=$P");
        url("analytics", "GET", "/api/v1/analytics/worker-metrics?workerId=$P");
    }

    private void system() {
        url("system", "POST", "/api/v1/system/tenants/$P/purge", "{}");
        body("system", "POST", "/api/v1/system/maintenance", "{\"enabled\":$V}");
        body("system", "POST", "/api/v1/system/maintenance/pop", "{\"enabled\":$V}");
    }

    private void fetch() {
        body("fetch", "POST", "/api/v1/fetch", "{\"entries\":[{\"queue\":$V,\"partition\":\"p\",\"offset\":0}]}");
        body("fetch", "POST", "/api/v1/fetch", "{\"entries\":[{\"queue\":\"hq\",\"partition\":$V,\"offset\":0}]}");
        body("fetch", "POST", "/api/v1/fetch", "{\"entries\":[{\"queue\":\"hq\",\"partition\":\"p\",\"offset\":$V}]}");
        body("fetch", "POST", "/api/v1/fetch", "{\"entries\":$V}");
    }

    private void tenancy() {
        for (String value : List.of("not-a-uuid", "\u0000", "\u00ff\u00fe", LONG_300)) {
            String name = switch (value) {
                case "not-a-uuid" -> "not-uuid";
                case "\u0000" -> "nul";
                case "\u00ff\u00fe" -> "invalid-utf8";
                default -> "long-300";
            };
            raw("tenancy", name, ("GET /api/v1/resources/queues HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                    + "x-queen-tenant: " + value + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
        }
    }

    private void framing() {
        String pushBody = "{\"items\":[{\"queue\":\"hq\",\"partition\":\"p\",\"payload\":1}]}";
        raw("framing", "chunk-size-not-hex", ("POST /api/v1/push HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n" + pushBody + "\r\n0\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
        raw("framing", "chunk-size-too-short", ("POST /api/v1/push HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n" + pushBody + "\r\n0\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
        raw("framing", "request-line-tabs", "GET\t/api/v1/resources/queues\tHTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                .getBytes(StandardCharsets.ISO_8859_1));
        raw("framing", "request-line-spaces", "GET  /api/v1/resources/queues  HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                .getBytes(StandardCharsets.ISO_8859_1));
        raw("framing", "unknown-version", "GET /api/v1/resources/queues HTTP/7.3\r\nHost: x\r\nConnection: close\r\n\r\n"
                .getBytes(StandardCharsets.ISO_8859_1));
        raw("framing", "header-without-colon", "GET /api/v1/resources/queues HTTP/1.1\r\nHost: x\r\nbroken header\r\nConnection: close\r\n\r\n"
                .getBytes(StandardCharsets.ISO_8859_1));
        raw("framing", "content-length-not-number", ("POST /api/v1/push HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                + "Content-Type: application/json\r\nContent-Length: abc\r\n\r\n" + pushBody).getBytes(StandardCharsets.ISO_8859_1));
        raw("framing", "content-length-twice", ("POST /api/v1/push HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                + "Content-Type: application/json\r\nContent-Length: 5\r\nContent-Length: " + pushBody.length() + "\r\n\r\n"
                + pushBody).getBytes(StandardCharsets.ISO_8859_1));
        raw("framing", "unknown-method", "BREW /api/v1/push HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                .getBytes(StandardCharsets.ISO_8859_1));
        raw("framing", "raw-nul-in-path", "GET /api/v1/resources/queues/a\u0000b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                .getBytes(StandardCharsets.ISO_8859_1));
        for (String unknown : List.of("GET /nope", "GET /api/v2/push", "POST /streams/v1/nope", "DELETE /health",
                "GET /api/v1/push", "PUT /api/v1/ack")) {
            raw("unknown-route", unknown, (unknown + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
        }
        raw("framing", "bad-percent-escape", "GET /api/v1/resources/queues/a%zzb HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                .getBytes(StandardCharsets.ISO_8859_1));
        for (String route : List.of("/api/v1/push", "/api/v1/configure", "/api/v1/transaction", "/api/v1/ack",
                "/api/v1/ack/batch", "/api/v1/fetch", "/api/v1/traces")) {
            String family = "body";
            cases.add(new Case(family, "utf16 " + route, "POST", route, Map.of("Content-Type", "application/json; charset=utf-16"),
                    pushBody.getBytes(StandardCharsets.UTF_16), null));
            cases.add(new Case(family, "invalid-utf8 " + route, "POST", route, Map.of("Content-Type", "application/json"),
                    concat("{\"items\":[{\"queue\":\"h".getBytes(StandardCharsets.US_ASCII), new byte[]{(byte) 0xFF, (byte) 0xC0},
                            "q\",\"partition\":\"p\",\"payload\":1}],\"queue\":\"\u0000\"}".getBytes(StandardCharsets.US_ASCII)), null));
            cases.add(new Case(family, "truncated-json " + route, "POST", route, Map.of("Content-Type", "application/json"),
                    "{\"items\":[{\"queue\":".getBytes(StandardCharsets.US_ASCII), null));
            cases.add(new Case(family, "json-array " + route, "POST", route, Map.of("Content-Type", "application/json"),
                    "[1,2,3]".getBytes(StandardCharsets.US_ASCII), null));
            cases.add(new Case(family, "json-scalar " + route, "POST", route, Map.of("Content-Type", "application/json"),
                    "\"text\"".getBytes(StandardCharsets.US_ASCII), null));
            cases.add(new Case(family, "empty " + route, "POST", route, Map.of("Content-Type", "application/json"),
                    new byte[0], null));
            cases.add(new Case(family, "deep-nesting " + route, "POST", route, Map.of("Content-Type", "application/json"),
                    ("{\"items\":" + "[".repeat(5000) + "]".repeat(5000) + "}").getBytes(StandardCharsets.US_ASCII), null));
        }
    }

    // ---------------------------------------------------------------- building

    private void body(String family, String method, String target, String template) {
        for (Defect d : STRING_DEFECTS) {
            if (d.json() == null) {
                continue;
            }
            String json = substitute(template).replace("$V", d.json());
            cases.add(new Case(family, d.name(), method, substitute(target), Map.of("Content-Type", "application/json"),
                    json.getBytes(StandardCharsets.UTF_8), null));
        }
    }

    private void url(String family, String method, String target) {
        url(family, method, target, null);
    }

    private void url(String family, String method, String target, String json) {
        for (Defect d : STRING_DEFECTS) {
            if (d.url() == null) {
                continue;
            }
            byte[] body = json == null ? null : substitute(json).getBytes(StandardCharsets.UTF_8);
            cases.add(new Case(family, d.name(), method, substitute(target).replace("$P", d.url()),
                    json == null ? Map.of() : Map.of("Content-Type", "application/json"), body, null));
        }
    }

    private void raw(String family, String defect, byte[] bytes) {
        cases.add(new Case(family, defect, "RAW", new String(bytes, 0, Math.min(bytes.length, 60), StandardCharsets.ISO_8859_1),
                Map.of(), null, bytes));
    }

    private String substitute(String s) {
        return s.replace("$PID", seed.partitionId()).replace("$TXN", seed.transactionId())
                .replace("$LEASE", seed.leaseId());
    }

    private static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] out = new byte[n];
        int pos = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, pos, p.length);
            pos += p.length;
        }
        return out;
    }

    static String abbreviate(String s) {
        String clean = s.replaceAll("[\\p{Cntrl}]", "?");
        return clean.length() <= 90 ? clean : clean.substring(0, 87) + "...";
    }
}
