package io.queen.broker.engine.segment;

import com.github.luben.zstd.ZstdCompressCtx;
import com.github.luben.zstd.ZstdDecompressCtx;

import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Reused zstd contexts. The one-shot {@code Zstd.compress}/{@code decompress} calls allocate and
 * initialise a native context per call (about a fifth of the time of compressing a 100 KB segment
 * at level 3). Virtual threads make thread-locals useless here, so contexts live in a small pool;
 * beyond {@link #MAX_IDLE} idle ones, returned contexts are freed.
 */
final class ZstdContexts {
    static final int MAX_IDLE = 32;

    private static final ConcurrentLinkedDeque<ZstdCompressCtx> COMPRESSORS = new ConcurrentLinkedDeque<>();
    private static final ConcurrentLinkedDeque<ZstdDecompressCtx> DECOMPRESSORS = new ConcurrentLinkedDeque<>();
    private static final AtomicInteger IDLE_COMPRESSORS = new AtomicInteger();
    private static final AtomicInteger IDLE_DECOMPRESSORS = new AtomicInteger();

    private ZstdContexts() {
    }

    /** One zstd frame of {@code raw}, with its content size recorded in the header. */
    static byte[] compress(byte[] raw, int level) {
        ZstdCompressCtx ctx = COMPRESSORS.pollFirst();
        if (ctx == null) {
            ctx = new ZstdCompressCtx();
        } else {
            IDLE_COMPRESSORS.decrementAndGet();
        }
        boolean ok = false;
        try {
            ctx.setLevel(level);
            ctx.setContentSize(true);
            byte[] out = ctx.compress(raw);
            ok = true;
            return out;
        } finally {
            // A context that failed mid-call is not trusted again.
            if (ok && IDLE_COMPRESSORS.incrementAndGet() <= MAX_IDLE) {
                COMPRESSORS.addFirst(ctx);
            } else {
                if (ok) {
                    IDLE_COMPRESSORS.decrementAndGet();
                }
                ctx.close();
            }
        }
    }

    /** Decompresses a single frame whose content size is {@code size}. */
    static byte[] decompress(byte[] blob, int size) {
        ZstdDecompressCtx ctx = DECOMPRESSORS.pollFirst();
        if (ctx == null) {
            ctx = new ZstdDecompressCtx();
        } else {
            IDLE_DECOMPRESSORS.decrementAndGet();
        }
        boolean ok = false;
        try {
            byte[] out = ctx.decompress(blob, size);
            ok = true;
            return out;
        } finally {
            if (ok && IDLE_DECOMPRESSORS.incrementAndGet() <= MAX_IDLE) {
                DECOMPRESSORS.addFirst(ctx);
            } else {
                if (ok) {
                    IDLE_DECOMPRESSORS.decrementAndGet();
                }
                ctx.close();
            }
        }
    }
}
