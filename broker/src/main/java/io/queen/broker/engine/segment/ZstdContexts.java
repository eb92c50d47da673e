package io.queen.broker.engine.segment;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdCompressCtx;
import com.github.luben.zstd.ZstdDecompressCtx;

import java.util.Arrays;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Reused zstd contexts. The one-shot {@code Zstd.compress}/{@code decompress} calls allocate and
 * initialise a native context per call (about a fifth of the time of compressing a 100 KB segment
 * at level 3). Virtual threads make thread-locals useless here, so contexts live in a small pool;
 * beyond {@link #MAX_IDLE} idle ones, returned contexts are freed.
 */
final class ZstdContexts {
    static final int MAX_IDLE = 32;
    /**
     * A compressor keeps its scratch arrays up to this size (a segment of a few hundred 1 KB
     * messages), so at most MAX_IDLE x 2 x this stay allocated while idle; larger segments use
     * arrays of their own.
     */
    static final int MAX_KEPT_SCRATCH = 512 * 1024;

    private static final Pool<Compressor> COMPRESSORS = new Pool<>(Compressor::new, Compressor::free);
    private static final Pool<ZstdDecompressCtx> DECOMPRESSORS =
            new Pool<>(ZstdDecompressCtx::new, ZstdDecompressCtx::close);

    private ZstdContexts() {
    }

    /** A pooled compressor, to be closed once its {@link Compressor#compress} result was taken. */
    static Compressor compressor(int level) {
        Compressor c = COMPRESSORS.borrow();
        c.ok = false;
        try {
            c.ctx.setLevel(level);
            c.ctx.setContentSize(true);
        } catch (RuntimeException e) {
            c.free();
            throw e;
        }
        return c;
    }

    /**
     * A compression context with scratch arrays for the input and the output. Allocating both per
     * segment (the output sized to zstd's bound, then copied to its exact size) was a quarter of
     * the broker's allocation in the push phase, by async-profiler's allocation samples.
     */
    static final class Compressor implements AutoCloseable {
        private final ZstdCompressCtx ctx = new ZstdCompressCtx();
        private byte[] input = new byte[0];
        private byte[] output = new byte[0];
        private boolean ok;

        /** An array of at least {@code length} bytes for the caller to fill; valid until close. */
        byte[] input(int length) {
            if (input.length < length) {
                input = new byte[length];
            }
            return input;
        }

        /** One zstd frame of the first {@code length} bytes of {@link #input}, with its content size in the header. */
        byte[] compress(int length) {
            int bound = Math.toIntExact(Zstd.compressBound(length));
            if (output.length < bound) {
                output = new byte[bound];
            }
            int size = ctx.compressByteArray(output, 0, output.length, input, 0, length); // throws on a zstd error
            ok = true;
            return Arrays.copyOf(output, size);
        }

        /** Back to the pool, dropping scratch arrays grown past {@link #MAX_KEPT_SCRATCH}. */
        @Override
        public void close() {
            if (input.length > MAX_KEPT_SCRATCH) {
                input = new byte[0];
            }
            if (output.length > MAX_KEPT_SCRATCH) {
                output = new byte[0];
            }
            COMPRESSORS.giveBack(this, ok);
        }

        private void free() {
            ctx.close();
        }
    }

    /** Decompresses a single frame whose content size is {@code size}. */
    static byte[] decompress(byte[] blob, int size) {
        ZstdDecompressCtx ctx = DECOMPRESSORS.borrow();
        boolean ok = false;
        try {
            byte[] out = ctx.decompress(blob, size);
            ok = true;
            return out;
        } finally {
            DECOMPRESSORS.giveBack(ctx, ok);
        }
    }

    /** Idle contexts, newest first; at most {@link #MAX_IDLE} are kept. */
    private static final class Pool<T> {
        private final ConcurrentLinkedDeque<T> idle = new ConcurrentLinkedDeque<>();
        private final AtomicInteger idleCount = new AtomicInteger();
        private final Supplier<T> create;
        private final Consumer<T> free;

        Pool(Supplier<T> create, Consumer<T> free) {
            this.create = create;
            this.free = free;
        }

        T borrow() {
            T t = idle.pollFirst();
            if (t == null) {
                return create.get();
            }
            idleCount.decrementAndGet();
            return t;
        }

        /** {@code ok} false: the call failed midway, so the context is not trusted again. */
        void giveBack(T t, boolean ok) {
            if (ok && idleCount.incrementAndGet() <= MAX_IDLE) {
                idle.addFirst(t);
                return;
            }
            if (ok) {
                idleCount.decrementAndGet();
            }
            free.accept(t);
        }
    }
}
