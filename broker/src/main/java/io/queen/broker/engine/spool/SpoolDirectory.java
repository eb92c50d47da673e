package io.queen.broker.engine.spool;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.Stream;

/**
 * The spool's folder (FILE_BUFFER_DIR, created on first use): files {@code spool-<epoch ms>-<seq>.log},
 * whose names sort by creation, and {@code failed/} beside them for what cannot be replayed. Every
 * change to an entry here is made durable by fsyncing the folder.
 */
public final class SpoolDirectory {
    private static final Logger LOG = Logger.getLogger(SpoolDirectory.class.getName());
    static final String PREFIX = "spool-";
    static final String SUFFIX = ".log";
    public static final String FAILED_DIR = "failed";

    private final Path dir;

    public SpoolDirectory(Path dir) {
        this.dir = dir;
    }

    public Path path() {
        return dir;
    }

    Path failedDir() {
        return dir.resolve(FAILED_DIR);
    }

    /** The name of a new spool file, created now; {@code seq} tells apart files of one millisecond. */
    Path newFileName(long seq) {
        return dir.resolve(String.format("%s%013d-%08d%s", PREFIX, System.currentTimeMillis(), seq, SUFFIX));
    }

    void create() throws IOException {
        Files.createDirectories(dir);
    }

    /** Every spool file, oldest first. */
    public List<Path> files() {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> {
                String n = p.getFileName().toString();
                return n.startsWith(PREFIX) && n.endsWith(SUFFIX) && Files.isRegularFile(p);
            }).sorted().toList();
        } catch (IOException e) {
            LOG.log(Level.WARNING, "push spool: cannot list " + dir, e);
            return List.of();
        }
    }

    /** The readable items of every spool file. */
    public long countItems() {
        long n = 0;
        for (Path p : files()) {
            try (SpoolFile.Reader r = new SpoolFile.Reader(p)) {
                while (r.next() != null) {
                    n++;
                }
            } catch (IOException e) {
                LOG.log(Level.WARNING, "push spool: cannot read " + p, e);
            }
        }
        return n;
    }

    /** Removes a replayed file. */
    void delete(Path file) {
        try {
            Files.deleteIfExists(file);
            sync(dir);
        } catch (IOException e) {
            LOG.log(Level.WARNING, "push spool: cannot delete replayed " + file + "; it would replay again"
                    + " (deduplicated)", e);
        }
    }

    /** Moves a file that cannot be replayed whole to failed/, for a human to look at. */
    void quarantine(Path file, String why) {
        Path failedDir = failedDir();
        try {
            Files.createDirectories(failedDir);
            Files.move(file, failedDir.resolve(file.getFileName()), StandardCopyOption.ATOMIC_MOVE);
            sync(failedDir);
            sync(dir);
            LOG.severe("push spool: moved " + file.getFileName() + " to " + failedDir + ": " + why);
        } catch (IOException e) {
            LOG.log(Level.SEVERE, "push spool: cannot move " + file + " aside (" + why + ")", e);
        }
    }

    /** Writes an item the database refuses for good to its own file under failed/, durably; false when it cannot. */
    boolean keepRefused(SpoolFile.Entry e) {
        Path failedDir = failedDir();
        Path file = failedDir.resolve("refused-" + e.messageId() + SUFFIX);
        try {
            Files.createDirectories(failedDir);
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                ch.write(ByteBuffer.wrap(SpoolFile.HEADER));
                ch.write(ByteBuffer.wrap(SpoolFile.encode(e)));
                ch.force(true);
            }
            sync(failedDir);
            return true;
        } catch (IOException | RuntimeException io) {
            LOG.log(Level.SEVERE, "push spool: cannot keep refused item in " + file + "; its file stays", io);
            return false;
        }
    }

    /** Makes the spool folder's entries durable (a file created, renamed or removed). */
    void sync() {
        sync(dir);
    }

    private static void sync(Path directory) {
        // Makes a created, renamed or deleted entry durable; not every platform allows it.
        try (FileChannel ch = FileChannel.open(directory, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException | RuntimeException e) {
            LOG.log(Level.FINE, "push spool: cannot fsync directory " + directory, e);
        }
    }
}
