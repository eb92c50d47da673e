package io.queen.bench;

import java.util.ArrayList;
import java.util.List;

/** A plain text table for the surface modes' figures: a header row, then rows, columns padded to fit. */
final class FigureTable {
    private final List<String> header;
    private final List<List<String>> rows = new ArrayList<>();

    FigureTable(String... header) {
        this.header = List.of(header);
    }

    /** Adds a row; it must have one cell per header column. */
    FigureTable row(String... cells) {
        if (cells.length != header.size()) {
            throw new IllegalArgumentException(cells.length + " cells for " + header.size() + " columns");
        }
        rows.add(List.of(cells));
        return this;
    }

    /** The first column left-aligned, the figures right-aligned, two spaces between columns. */
    String render() {
        int[] width = new int[header.size()];
        for (List<String> r : allRows()) {
            for (int i = 0; i < width.length; i++) {
                width[i] = Math.max(width[i], r.get(i).length());
            }
        }
        StringBuilder sb = new StringBuilder();
        for (List<String> r : allRows()) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < width.length; i++) {
                String cell = r.get(i);
                String pad = " ".repeat(width[i] - cell.length());
                line.append(i == 0 ? cell + pad : "  " + pad + cell);
            }
            sb.append(line.toString().stripTrailing()).append(System.lineSeparator());
        }
        return sb.toString();
    }

    /** A latency in milliseconds, "-" when there was none. */
    static String ms(double ms) {
        return Double.isNaN(ms) ? "-" : ms < 10 ? String.format("%.2f", ms) : String.format("%.1f", ms);
    }

    /** A rate with thousands separators. */
    static String rate(double perSecond) {
        return String.format("%,.0f", perSecond);
    }

    private List<List<String>> allRows() {
        List<List<String>> all = new ArrayList<>();
        all.add(header);
        all.addAll(rows);
        return all;
    }
}
