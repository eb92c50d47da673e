package io.queen.broker.engine.spool;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Appends spooled items to the newest spool file, the only one ever appended to, and only by this
 * process; it rotates after FILE_BUFFER_EVENTS_PER_FILE items, and every other file is sealed.
 * A request's records are written and fsynced (a new file's directory entry too) before it returns,
 * so an answered item survives a crash. A failed write is truncated away and the file sealed:
 * nothing is half-written into a file that is appended to again.
 */
public final class SpoolWriter {
    private static final Logger LOG = Logger.getLogger(SpoolWriter.class.getName());

    private final SpoolDirectory directory;
    private final int itemsPerFile;
    private final SpoolState state;

    private final ReentrantLock lock = new ReentrantLock();
    // Guarded by lock: the file being appended to.
    private FileChannel active;
    private Path activePath;
    private int activeItems;
    private long fileSeq;

    public SpoolWriter(SpoolDirectory directory, int itemsPerFile, SpoolState state) {
        this.directory = directory;
        this.itemsPerFile = itemsPerFile;
        this.state = state;
    }

    /** Writes the entries durably, in order; false (nothing of them kept) when the spool cannot be written. */
    public boolean append(List<SpoolFile.Entry> entries) {
        List<byte[]> records = new ArrayList<>(entries.size());
        int bytes = 0;
        for (SpoolFile.Entry e : entries) {
            byte[] r = SpoolFile.encode(e);
            records.add(r);
            bytes += r.length;
        }
        lock.lock();
        try {
            if (active == null) {
                openActive();
            }
            long start = active.position();
            try {
                ByteBuffer buf = ByteBuffer.allocate(bytes);
                records.forEach(buf::put);
                buf.flip();
                while (buf.hasRemaining()) {
                    active.write(buf);
                }
                active.force(false);
            } catch (IOException | RuntimeException e) {
                abandonActive(start);
                throw e;
            }
            activeItems += records.size();
            state.spooled(records.size());
            if (activeItems >= itemsPerFile) {
                sealActive();
            }
            return true;
        } catch (IOException | RuntimeException e) {
            state.refused(records.size());
            LOG.severe("push spool " + directory.path() + ": cannot write " + records.size()
                    + " items durably; they are answered failed: " + e);
            return false;
        } finally {
            lock.unlock();
        }
    }

    /** Closes the file being appended to, so the drain may take it; the next append opens a new one. */
    public void seal() {
        lock.lock();
        try {
            sealActive();
        } finally {
            lock.unlock();
        }
    }

    /** The file being appended to, or null: the drain leaves it alone. */
    Path activePath() {
        lock.lock();
        try {
            return activePath;
        } finally {
            lock.unlock();
        }
    }

    /** True when the file being appended to holds items. */
    boolean hasActiveItems() {
        lock.lock();
        try {
            return activeItems > 0;
        } finally {
            lock.unlock();
        }
    }

    private void openActive() throws IOException {
        directory.create();
        Path path;
        do {
            path = directory.newFileName(fileSeq++);
        } while (Files.exists(path));
        FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        try {
            ch.write(ByteBuffer.wrap(SpoolFile.HEADER));
            ch.force(true);
            directory.sync();
        } catch (IOException | RuntimeException e) {
            ch.close();
            Files.deleteIfExists(path);
            throw e;
        }
        active = ch;
        activePath = path;
        activeItems = 0;
        LOG.info("push spool: writing " + path);
    }

    /** After a failed append: cut the partial record off and stop appending to this file. */
    private void abandonActive(long validLength) {
        try {
            active.truncate(validLength);
            active.force(true);
        } catch (IOException | RuntimeException e) {
            // Left as a torn tail, which the reader skips; the file is never appended to again.
            LOG.log(Level.WARNING, "push spool: cannot truncate " + activePath + " after a failed write", e);
        }
        sealActive();
    }

    /** Closes the active file; an empty one is removed. Caller holds the lock. */
    private void sealActive() {
        if (active == null) {
            return;
        }
        Path path = activePath;
        int items = activeItems;
        try {
            active.close();
        } catch (IOException e) {
            LOG.log(Level.WARNING, "push spool: closing " + path, e);
        }
        active = null;
        activePath = null;
        activeItems = 0;
        if (items == 0) {
            try {
                Files.deleteIfExists(path);
            } catch (IOException e) {
                LOG.log(Level.FINE, "push spool: removing empty " + path, e);
            }
        }
    }
}
