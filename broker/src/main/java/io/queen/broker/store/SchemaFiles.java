package io.queen.broker.store;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystem;
import java.nio.file.FileSystemAlreadyExistsException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The schema as packaged into the broker jar: {@code sql/schema.sql} then exactly 33 files
 * {@code sql/procedures/001_*.sql .. 033_*.sql}, in lexical order, which is the apply order.
 */
public final class SchemaFiles {
    public static final int PROCEDURE_FILE_COUNT = 33;
    private static final Pattern PROCEDURE_NAME = Pattern.compile("(\\d{3})_[a-z0-9_]+\\.sql");

    public record SchemaFile(String name, String sql) {
    }

    private SchemaFiles() {
    }

    public static List<SchemaFile> load() {
        List<SchemaFile> files = new ArrayList<>();
        files.add(new SchemaFile("schema.sql", read("sql/schema.sql")));
        List<String> names = listProcedures();
        if (names.size() != PROCEDURE_FILE_COUNT) {
            throw new IllegalStateException("expected " + PROCEDURE_FILE_COUNT
                    + " procedure files in sql/procedures, found " + names.size() + ": " + names);
        }
        for (int i = 0; i < names.size(); i++) {
            String name = names.get(i);
            var m = PROCEDURE_NAME.matcher(name);
            if (!m.matches() || Integer.parseInt(m.group(1)) != i + 1) {
                throw new IllegalStateException("procedure file " + (i + 1) + " is misnamed: " + name);
            }
            files.add(new SchemaFile("procedures/" + name, read("sql/procedures/" + name)));
        }
        return files;
    }

    private static String read(String resource) {
        try (InputStream in = SchemaFiles.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("schema resource missing from the classpath: " + resource);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + resource, e);
        }
    }

    private static List<String> listProcedures() {
        URL url = SchemaFiles.class.getClassLoader().getResource("sql/procedures");
        if (url == null) {
            throw new IllegalStateException("schema folder missing from the classpath: sql/procedures");
        }
        try {
            URI uri = url.toURI();
            if ("jar".equals(uri.getScheme())) {
                FileSystem fs;
                try {
                    fs = FileSystems.newFileSystem(uri, Map.of());
                } catch (FileSystemAlreadyExistsException e) {
                    fs = FileSystems.getFileSystem(uri);
                }
                return namesIn(fs.provider().getPath(uri));
            }
            return namesIn(Path.of(uri));
        } catch (URISyntaxException | IOException e) {
            throw new IllegalStateException("cannot list sql/procedures at " + url, e);
        }
    }

    private static List<String> namesIn(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString().replace("/", ""))
                    .filter(n -> n.endsWith(".sql"))
                    .sorted()
                    .toList();
        }
    }
}
