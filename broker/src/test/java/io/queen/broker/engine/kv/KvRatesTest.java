package io.queen.broker.engine.kv;

import io.queen.broker.config.KvSettings;
import io.queen.broker.lifecycle.ManualTicker;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The KV rate rung on a clock the test moves: bursts, refusals with Retry-After, refills. */
class KvRatesTest {
    private final ManualTicker ticker = new ManualTicker();
    private final UUID tenant = UUID.randomUUID();

    /** reads 10/s burst 20, writes 2/s burst 4, the cell {@code cellRate}/s. */
    private static KvSettings.Guard guard(int cellRate) {
        return new KvSettings.Guard(false, 10, 20, 2, 4, cellRate, 100, 300_000, 30_000, 90, 80, 1_000, 1_000);
    }

    private static KvQuota.Limits own(Integer reads, Integer writes) {
        return new KvQuota.Limits(true, true, null, null, reads, writes, 0, 0, 1);
    }

    private long read(KvRates rates) {
        return rates.take(tenant, true, false, null);
    }

    private long write(KvRates rates) {
        return rates.take(tenant, false, true, null);
    }

    @Test
    void aBurstPassesThenTheNextCallWaitsForItsToken() {
        KvRates rates = new KvRates(guard(0), ticker);
        for (int i = 0; i < 4; i++) {
            assertEquals(0, write(rates), "write " + i + " within the burst");
        }
        assertEquals(1, write(rates), "out of tokens: 0.5 s to the next, Retry-After rounds up to 1");
        ticker.advance(Duration.ofMillis(499));
        assertEquals(1, write(rates), "still short of a token");
        ticker.advance(Duration.ofMillis(1));
        assertEquals(0, write(rates), "refilled at 2/s");
        assertEquals(1, write(rates));
        assertEquals(0, read(rates), "reads spend their own bucket");
    }

    @Test
    void aRefillStopsAtTheBurst() {
        KvRates rates = new KvRates(guard(0), ticker);
        for (int i = 0; i < 4; i++) {
            write(rates);
        }
        ticker.advance(Duration.ofHours(1));
        for (int i = 0; i < 4; i++) {
            assertEquals(0, write(rates), "write " + i + " after a long idle");
        }
        assertEquals(1, write(rates), "an hour idle buys the burst, not 7200 tokens");
    }

    @Test
    void aRefusedCallSpendsNothing() {
        KvRates rates = new KvRates(guard(0), ticker);
        for (int i = 0; i < 4; i++) {
            write(rates);
        }
        int readsBefore = 0;
        while (rates.take(tenant, true, true, null) > 0 && readsBefore < 100) {
            readsBefore++;
        }
        assertEquals(100, readsBefore, "a read-and-write call is refused while the write bucket is empty");
        for (int i = 0; i < 20; i++) {
            assertEquals(0, read(rates), "read " + i + ": the refused calls took no read token");
        }
    }

    @Test
    void theTenantsOwnRateNarrowsItsBucket() {
        KvRates rates = new KvRates(guard(0), ticker);
        KvQuota.Limits oneASecond = own(1, null);
        assertEquals(0, rates.take(tenant, true, false, oneASecond));
        assertEquals(0, rates.take(tenant, true, false, oneASecond), "burst twice its rate");
        assertEquals(1, rates.take(tenant, true, false, oneASecond));
        ticker.advance(Duration.ofSeconds(1));
        assertEquals(0, rates.take(tenant, true, false, oneASecond), "one token a second");
    }

    @Test
    void theCellBucketIsSharedByEveryTenantAndAsksForWholeSeconds() {
        KvRates rates = new KvRates(guard(1), ticker);
        assertEquals(0, rates.take(UUID.randomUUID(), true, false, null));
        assertEquals(1, rates.take(UUID.randomUUID(), true, false, null), "another tenant, the same cell token");
        ticker.advance(Duration.ofMillis(1_000));
        assertEquals(0, rates.take(UUID.randomUUID(), true, false, null));
    }

    @Test
    void retryAfterIsTheWaitRoundedUpToSeconds() {
        KvRates rates = new KvRates(new KvSettings.Guard(false, 10, 20, 1, 1, 0, 100, 300_000, 30_000, 90, 80,
                1_000, 1_000), ticker);
        assertEquals(0, write(rates));
        ticker.advance(Duration.ofMillis(1));
        assertEquals(1, write(rates), "999 ms left: 1 s");
        ticker.advance(Duration.ofMillis(999));
        assertEquals(0, write(rates));
    }
}
