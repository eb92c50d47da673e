package io.queen.broker;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * The package dependencies point one way (broker/DESIGN.md, Layering). Read from the compiled
 * classes, whose constant pools name every type a class uses, including those reached only through
 * {@code var} or a chain of calls, which an import check would miss.
 */
class LayeringTest {
    /** Each package and the packages it must not use (its subpackages are held to the same rule). */
    private static final Map<String, List<String>> FORBIDDEN = Map.of(
            "lifecycle", List.of("config", "store", "engine", "jobs", "http"),
            "config", List.of("store", "engine", "jobs", "http"),
            "store", List.of("engine", "jobs", "http"),
            "engine", List.of("jobs", "http"),
            "jobs", List.of("http"),
            "http", List.of("store", "jobs"));

    @Test
    void everyPackageUsesOnlyTheLayersBelowIt() throws Exception {
        Path root = Path.of(Broker.class.getProtectionDomain().getCodeSource().getLocation().toURI())
                .resolve("io/queen/broker");
        List<String> violations = new ArrayList<>();
        int checked = 0;
        for (Map.Entry<String, List<String>> rule : FORBIDDEN.entrySet()) {
            for (Path cls : classes(root.resolve(rule.getKey()))) {
                checked++;
                String pool = new String(Files.readAllBytes(cls), StandardCharsets.ISO_8859_1);
                for (String forbidden : rule.getValue()) {
                    if (pool.contains("io/queen/broker/" + forbidden + "/")) {
                        violations.add(root.relativize(cls) + " uses " + forbidden);
                    }
                }
            }
        }
        assertFalse(checked < 50, "only " + checked + " classes found under " + root);
        assertEquals(List.of(), violations);
    }

    private static List<Path> classes(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(p -> p.toString().endsWith(".class")).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
