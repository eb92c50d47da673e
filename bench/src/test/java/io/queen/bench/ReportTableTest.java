package io.queen.bench;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.stream.LongStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReportTableTest {
    private static final long MESSAGES = 200_000;

    /** A column whose latency run cost {@code latencyCpu} a message; the other figures are plausible fillers. */
    private static ScenarioResult column(int partitions, CpuMeter.PerMessage latencyCpu) {
        var push = new PushPhase.Outcome(MESSAGES, 0, 2_000_000_000L, null, new Latencies());
        var consume = new ConsumePhase.Outcome(MESSAGES, 0, 0, true, 2_500_000_000L, null, new Latencies(), null);
        var round = new ScenarioResult.Round(push, new CpuMeter.PerMessage(6.8, 7.7, 1.4), 0.01, consume);
        var latency = new ScenarioResult.LatencyRun(push, consume,
                new HostStalls.Outcome(67, 17_400_000, 500_000_000, 30_000_000_000L), latencyCpu);
        // Five rounds whose pushes outran their ceilings: 3-digit ratios, the widest cell the table has.
        var ceilings = LongStream.of(2_100, 2_220, 2_160, 2_360, 2_060)
                .mapToObj(ms -> new CeilingPhase.Outcome(MESSAGES, ms * 1_000_000L)).toList();
        return new ScenarioResult(partitions, List.of(round, round, round, round, round), ceilings,
                latency, new IdlePopPhase.Outcome(0.78, 0.56), 878, new ScenarioResult.CpuUse(19, 8, 66),
                new CpuMeter.PerMessage(0.4, 14.7, 2.6));
    }

    private static String line(String table, String rowName) {
        return table.lines().filter(l -> l.startsWith(rowName)).findFirst()
                .orElseThrow(() -> new AssertionError("no row " + rowName + " in\n" + table));
    }

    @Test
    void theLatencyRunsCpuRowShowsWholeMicrosecondsAndADashForAPartyNotMeasured() {
        String table = ReportTable.render(BenchOptions.parse(), List.of(
                column(10, new CpuMeter.PerMessage(178.7, 275.0, 59.7)),
                column(10_000, new CpuMeter.PerMessage(185.7, Double.NaN, 60.3))));
        String row = line(table, "CPU us/msg broker/PG/client @1,000 msg/s");
        // Both cells stay apart: the first ends before the second begins.
        assertTrue(row.matches(".*\\s179/275/60\\s+186/-/60$"), row);
    }

    @Test
    void eachRoundsRatiosStandApartFromTheNextColumnsEvenWhenWiderThanTheCell() {
        String table = ReportTable.render(BenchOptions.parse(), List.of(
                column(10, new CpuMeter.PerMessage(1, 1, 1)), column(10_000, new CpuMeter.PerMessage(1, 1, 1))));
        assertTrue(line(table, "push / ceiling of each round").endsWith(" 105/111/108/118/103% 105/111/108/118/103%"),
                table);
    }

    @Test
    void everyRowNameFitsItsColumnSoCellsLineUp() {
        String table = ReportTable.render(BenchOptions.parse(), List.of(
                column(10, new CpuMeter.PerMessage(178.7, 275.0, 59.7)),
                column(10_000, new CpuMeter.PerMessage(185.7, 225.3, 60.3))));
        List<String> rows = table.lines().filter(l -> !l.isBlank() && !l.startsWith("==")
                && !l.startsWith("throughput") && !l.startsWith("push / ceiling of each round")).toList();
        int width = line(table, "partitions").length();
        for (String row : rows) {
            assertEquals(width, row.length(), "row out of line: " + row);
        }
    }
}
