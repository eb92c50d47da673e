package io.queen.broker.store;

import io.queen.broker.store.WakeCodec.Key;
import io.queen.broker.store.WakeCodec.QueueOf;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;

class WakeDispatcherTest {
    private static final UUID TENANT = UUID.fromString("00000000-0000-0000-0000-0000000000aa");

    /** Records what the dispatcher reports, in order. */
    private static final class Recorder implements WakeTarget {
        final List<String> calls = new ArrayList<>();

        @Override
        public void signal(UUID tenant, String queue, String partition) {
            calls.add("signal " + tenant + "/" + queue + "/" + partition);
        }

        @Override
        public void signalAllWaiting() {
            calls.add("all");
        }
    }

    private final Recorder target = new Recorder();
    private final WakeDispatcher dispatcher = new WakeDispatcher(new WakeCodec("broker-b"), target, "test");
    private final WakeCodec peer = new WakeCodec("broker-a");

    @Test
    void aPeersKeysAndChangedQueuesReachTheTargetAndAreCounted() {
        List<String> changed = new ArrayList<>();
        dispatcher.onQueueChanged((tenant, queue) -> changed.add(tenant + "/" + queue));
        peer.encodeKeys(List.of(new Key(TENANT, "q", "p1"), new Key(TENANT, "q", null))).forEach(dispatcher::deliver);
        peer.encodeConfig(List.of(new QueueOf(TENANT, "q"))).forEach(dispatcher::deliver);
        assertEquals(List.of("signal " + TENANT + "/q/p1", "signal " + TENANT + "/q/null"), target.calls);
        assertEquals(List.of(TENANT + "/q"), changed);
        assertEquals(2, dispatcher.received());
    }

    @Test
    void ownEchoesAndMalformedPayloadsAreDroppedUncounted() {
        new WakeCodec("broker-b").encodeKeys(List.of(new Key(TENANT, "q", "p"))).forEach(dispatcher::deliver);
        dispatcher.deliver("{\"keys\":[],\"from\":\"broker-b\"}");
        dispatcher.deliver("not json");
        dispatcher.deliver(null);
        dispatcher.deliver("{\"from\":\"broker-a\",\"keys\":[[\"" + TENANT + "\",\"q\",\"p\"],[1]]}");
        assertEquals(List.of(), target.calls);
        assertEquals(0, dispatcher.received());
    }

    @Test
    void aListenerSessionWakesEveryParkedPop() {
        dispatcher.listenerConnected();
        assertEquals(List.of("all"), target.calls);
    }
}
