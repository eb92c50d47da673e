package io.queen.charts;

import java.nio.file.Path;

/** Where the chart, the generated CRDs and the version live; the surefire configuration passes them. */
final class RepositoryPaths {
    private RepositoryPaths() {
    }

    static Path root() {
        return Path.of(System.getProperty("queen.repo.root", "..")).toAbsolutePath().normalize();
    }

    static Path chart() {
        return Path.of(System.getProperty("queen.chart.dir", root().resolve("charts/queen").toString()))
                .toAbsolutePath().normalize();
    }

    static Path crds() {
        return root().resolve("crds");
    }

    /** The root POM's {@code revision}: image tag, chart version and appVersion. */
    static String version() {
        String version = System.getProperty("queen.version");
        if (version == null || version.isBlank()) {
            throw new IllegalStateException("system property queen.version is not set (run through Maven)");
        }
        return version;
    }
}
