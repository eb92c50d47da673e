package io.queen.bench;

import java.util.List;
import java.util.function.Function;
import java.util.stream.Collectors;

/** The closing table: one column per partition count, then the ratio between the first and last. */
final class ReportTable {
    private static final String ROW = "%-42s";
    // A space before every cell, so a value longer than the column (five rounds' ratios) still
    // stands apart from its neighbour.
    private static final String CELL = " %15s";

    private ReportTable() {
    }

    static String render(BenchOptions o, List<ScenarioResult> results) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format("%n== Queen broker benchmark: %,d messages a round (push and consume: median of %d "
                        + "rounds), %d producers, %d consumers, batch %d, payload %d B, push rate %s ==%n",
                o.messages(), Scenario.THROUGHPUT_ROUNDS, o.producers(), o.consumers(), o.batch(),
                o.payloadBytes(), o.rate() > 0 ? String.format("%,.0f msg/s", o.rate()) : "unthrottled"));
        row(sb, "partitions", results, r -> String.format("%,d", r.partitions()));
        row(sb, "push msg/s", results, r -> rate(r.push().messagesPerSecond()));
        row(sb, "end-to-end msg/s (consume phase)", results, r -> rate(r.consume().messagesPerSecond()));
        row(sb, "push->delivery p50 ms (backlog)", results, r -> ms(r.consume().latencies().percentileMs(50)));
        row(sb, "push->delivery p99 ms (backlog)", results, r -> ms(r.consume().latencies().percentileMs(99)));
        if (o.latencyMessages() > 0) {
            String at = String.format("@%,.0f msg/s", o.latencyRate());
            row(sb, "delivery p50 ms " + at, results, r -> ms(r.latency().delivery().latencies().percentileMs(50)));
            row(sb, "delivery p99 ms " + at, results, r -> ms(r.latency().delivery().latencies().percentileMs(99)));
            row(sb, "host stalls >=" + HostStalls.STALL_MS + " ms: count/longest ms", results, r -> String.format(
                    "%,d/%.0f", r.latency().hostStalls().count(), r.latency().hostStalls().longestNanos() / 1e6));
            row(sb, "CPU us/msg broker/PG/client " + at, results, r -> wholeCpu(r.latency().cpu()));
        }
        row(sb, "idle empty pop ms full/watermark", results, r -> String.format("%.2f/%.2f",
                r.idlePop().fullScanMs(), r.idlePop().watermarkMs()));
        row(sb, "broker peak RSS MB", results, r -> String.format("%,.0f", r.brokerPeakRssMb()));
        row(sb, "CPU s broker/client/wall", results, r -> String.format("%.0f/%.0f/%.0f", r.cpu().brokerSeconds(),
                r.cpu().clientSeconds(), r.cpu().wallSeconds()));
        row(sb, "push CPU us/msg broker/PG/client", results, r -> cpu(r.pushCpu()));
        row(sb, "push JIT share of broker CPU", results, r -> Scenario.percent(r.pushCompilerShare()));
        row(sb, "raw PostgreSQL ceiling msg/s", results, r -> rate(r.ceiling().messagesPerSecond()));
        row(sb, "ceiling CPU us/msg PG/client", results, r -> micros(r.ceilingCpu().postgres()) + "/"
                + micros(r.ceilingCpu().client()));
        row(sb, "idle broker CPU in ceiling us/msg", results, r -> micros(r.ceilingCpu().broker()));
        row(sb, "push / ceiling", results, r -> String.format("%.0f%%", 100 * r.pushToCeiling()));
        row(sb, "push / ceiling of each round", results, r -> r.pushToCeilingByRound().stream()
                .map(x -> String.format("%.0f", 100 * x)).collect(Collectors.joining("/")) + "%");
        row(sb, "issues", results, ReportTable::issues);
        if (results.size() > 1) {
            ScenarioResult first = results.get(0);
            ScenarioResult last = results.get(results.size() - 1);
            sb.append(String.format("throughput P=%,d / P=%,d: push %.2fx, end-to-end %.2fx%n", last.partitions(),
                    first.partitions(), last.push().messagesPerSecond() / first.push().messagesPerSecond(),
                    last.consume().messagesPerSecond() / first.consume().messagesPerSecond()));
        }
        return sb.toString();
    }

    private static void row(StringBuilder sb, String name, List<ScenarioResult> results,
                            Function<ScenarioResult, String> cell) {
        sb.append(String.format(ROW, name));
        for (ScenarioResult r : results) {
            sb.append(String.format(CELL, cell.apply(r)));
        }
        sb.append(System.lineSeparator());
    }

    /** "none", or a short tally of anything that makes the column's figures suspect. */
    private static String issues(ScenarioResult r) {
        // Every round counts, not only the median ones the table shows.
        long notQueued = r.rounds().stream().mapToLong(x -> x.push().notQueued()).sum()
                + (r.latency() == null ? 0 : r.latency().push().notQueued());
        long repeats = r.rounds().stream().mapToLong(x -> x.consume().repeats()).sum()
                + (r.latency() == null ? 0 : r.latency().delivery().repeats());
        long ackFailures = r.rounds().stream().mapToLong(x -> x.consume().ackFailures()).sum()
                + (r.latency() == null ? 0 : r.latency().delivery().ackFailures());
        boolean incomplete = !r.complete();
        StringBuilder sb = new StringBuilder();
        if (incomplete) {
            sb.append("INCOMPLETE ");
        }
        if (notQueued > 0) {
            sb.append(notQueued).append("nq ");
        }
        if (repeats > 0) {
            sb.append(repeats).append("rep ");
        }
        if (ackFailures > 0) {
            sb.append(ackFailures).append("ackf ");
        }
        return sb.isEmpty() ? "none" : sb.toString().trim();
    }

    /** "-" for a party not measured here. */
    private static String cpu(CpuMeter.PerMessage m) {
        return cpu(m, "%.1f");
    }

    /** Whole microseconds: hundreds a message at a low rate, where decimals would overflow the cell. */
    private static String wholeCpu(CpuMeter.PerMessage m) {
        return cpu(m, "%.0f");
    }

    private static String cpu(CpuMeter.PerMessage m, String format) {
        return String.format("%s/%s/%s", micros(m.broker(), format), micros(m.postgres(), format),
                micros(m.client(), format));
    }

    private static String micros(double us) {
        return micros(us, "%.1f");
    }

    private static String micros(double us, String format) {
        return Double.isNaN(us) ? "-" : String.format(format, us);
    }

    private static String rate(double perSecond) {
        return String.format("%,.0f", perSecond);
    }

    private static String ms(double millis) {
        return Double.isNaN(millis) ? "-" : millis >= 100 ? String.format("%,.0f", millis)
                : String.format("%.1f", millis);
    }
}
