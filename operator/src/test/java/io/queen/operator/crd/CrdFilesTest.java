package io.queen.operator.crd;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The CRDs in the repository's crds/ folder are the ones the build generates from the crd
 * package, byte for byte, after {@link CrdPostProcessing}. To refresh them after changing a CRD class:
 * <pre>
 * mvn -B -pl operator -am test -Dtest=CrdFilesTest -Dsurefire.failIfNoSpecifiedTests=false -Dcrds.update=true
 * </pre>
 */
class CrdFilesTest {
    private static final Path GENERATED = Path.of("target", "classes", "META-INF", "fabric8");
    private static final Path COMMITTED = Path.of(System.getProperty("queen.repo.root", ".."), "crds");

    @Test
    void committedCrdsMatchTheGeneratedOnes() throws IOException {
        List<Path> generated = generatedCrds();
        assertFalse(generated.isEmpty(), "no CRD generated under " + GENERATED.toAbsolutePath());
        if (Boolean.getBoolean("crds.update")) {
            Files.createDirectories(COMMITTED);
            for (Path crd : generated) {
                Files.writeString(COMMITTED.resolve(crd.getFileName()), committedForm(crd));
            }
        }
        List<String> stale = new ArrayList<>();
        for (Path crd : generated) {
            Path committed = COMMITTED.resolve(crd.getFileName());
            if (!Files.exists(committed) || !Files.readString(committed).equals(committedForm(crd))) {
                stale.add(committed.getFileName().toString());
            }
        }
        try (Stream<Path> files = Files.isDirectory(COMMITTED) ? Files.list(COMMITTED) : Stream.empty()) {
            files.map(p -> p.getFileName().toString())
                    .filter(name -> name.endsWith(".yml") && !Files.exists(GENERATED.resolve(name)))
                    .forEach(name -> stale.add(name + " (no longer generated)"));
        }
        if (!stale.isEmpty()) {
            fail("crds/ is stale: " + stale + ". Refresh with: mvn -B -pl operator -am test -Dtest=CrdFilesTest"
                    + " -Dsurefire.failIfNoSpecifiedTests=false -Dcrds.update=true");
        }
    }

    private static String committedForm(Path generated) throws IOException {
        return CrdPostProcessing.committedForm(Files.readString(generated));
    }

    private static List<Path> generatedCrds() throws IOException {
        if (!Files.isDirectory(GENERATED)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(GENERATED)) {
            return files.filter(p -> p.getFileName().toString().endsWith("-v1.yml")).sorted().toList();
        }
    }
}
