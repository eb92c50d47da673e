package io.queen.broker.engine;

import io.queen.broker.engine.segment.Frame;
import io.queen.broker.engine.segment.PayloadCipher;
import io.queen.broker.engine.segment.SegmentCodec;
import io.queen.broker.engine.segment.UuidV7;
import io.queen.broker.store.LogStore;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The state of one pop call across partitions (broker/DESIGN.md, Pop path): the budget left, the
 * partitions that yielded, the messages, and the one lease id every claimed partition shares.
 * Each partition is claimed by one {@code log_pop_v1} statement and its frames decoded here.
 */
final class PopClaim {
    private final PopService.Request request;
    private final PayloadCipher cipher;
    private final String leaseId;
    private final List<PopService.Message> messages = new ArrayList<>();
    private int remaining;
    private int claimed;
    private String firstPartition;
    private UUID firstPartitionId;
    /** The policy of the queue being claimed from, and whether any queue of this call conflated or disagreed. */
    private boolean conflating;
    private boolean anyConflating;
    private boolean conflict;

    PopClaim(PopService.Request request, PayloadCipher cipher) {
        this.request = request;
        this.cipher = cipher;
        this.leaseId = request.autoAck() ? "" : UuidV7.next().toString();
        this.remaining = Math.max(request.batch(), 1);
    }

    /** The group's policy on the queue claimed from next. */
    void policy(boolean conflation) {
        conflating = conflation;
        anyConflating |= conflation;
        conflict |= request.conflation() != null && request.conflation() != conflation;
    }

    /** The most partitions this call claims. */
    int cap() {
        return request.partitionCap(anyConflating);
    }

    /** Whether the budget or the partition cap is used up. */
    boolean done() {
        return remaining <= 0 || claimed >= cap();
    }

    /** Whether no message is left in the budget. */
    boolean budgetSpent() {
        return remaining <= 0;
    }

    /** Partitions that yielded messages so far. */
    int claimed() {
        return claimed;
    }

    /** Claims what the budget allows of one partition; returns whether it yielded messages. */
    boolean tryPartition(Connection c, String queue, UUID partitionId, String partitionName) throws SQLException {
        List<LogStore.ClaimedSegment> segments = LogStore.pop(c, new LogStore.PopQuery(partitionId,
                request.consumerGroup(), remaining, request.leaseSeconds(), leaseId, request.autoAck(),
                request.subscriptionMode(), request.subscriptionFrom(), conflating));
        if (segments.isEmpty()) {
            return false;
        }
        for (LogStore.ClaimedSegment s : segments) {
            for (Frame f : SegmentCodec.decode(s.blob(), s.startOff(), s.take())) {
                byte[] data = cipher.payloadOf(f);
                messages.add(new PopService.Message(f.messageId(), f.transactionId(), f.traceId(), data,
                        f.producerSub(), s.createdAt(), partitionId, partitionName, queue, s.attempt()));
            }
            remaining -= s.take();
        }
        if (claimed == 0) {
            firstPartition = partitionName;
            firstPartitionId = partitionId;
        }
        claimed++;
        return true;
    }

    PopService.Result result(String queue) {
        return new PopService.Result(queue, firstPartition, firstPartitionId, leaseId, request.consumerGroup(),
                List.copyOf(messages), claimed, anyConflating, conflict, null);
    }
}
