package io.queen.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DeliveryLedgerTest {
    @Test
    void ledgerCountsRepeatsApart() {
        DeliveryLedger ledger = new DeliveryLedger(10, 2);
        assertTrue(ledger.record(10));
        assertFalse(ledger.record(10));
        assertFalse(ledger.record(99));
        assertTrue(ledger.record(11));
        assertTrue(ledger.complete());
        assertEquals(2, ledger.repeats());
    }
}
