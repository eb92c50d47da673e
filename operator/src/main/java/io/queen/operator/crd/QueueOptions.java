package io.queen.operator.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;

/**
 * Every option of the broker's {@code POST /api/v1/configure}, with the wire names. An option left
 * out takes the broker's default: the operator configures with {@code mode: "replace"}, so removing
 * an option here resets it on the broker. The bounds are the broker's own (its configure procedure,
 * sql/procedures/012_configure.sql): values it would refuse, or silently clamp, are refused at
 * {@code kubectl apply} instead, so what is applied always equals what is declared. Every integer is
 * a 32-bit one on the broker; durations and counts are at least 0, priority may be negative.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class QueueOptions {
    @JsonPropertyDescription("Seconds a popped message stays leased before redelivery (broker default 300).")
    @Min(0)
    @Max(Integer.MAX_VALUE)
    private Integer leaseTime;

    @JsonPropertyDescription("Failed acks allowed per partition and consumer group before the message goes to the DLQ (default 3).")
    @Min(0)
    @Max(Integer.MAX_VALUE)
    private Integer retryLimit;

    @JsonPropertyDescription("Milliseconds between retries (default 1000).")
    @Min(0)
    @Max(Integer.MAX_VALUE)
    private Integer retryDelay;

    @JsonPropertyDescription("Queue priority for namespace/task pops (default 0).")
    @Min(Integer.MIN_VALUE)
    @Max(Integer.MAX_VALUE)
    private Integer priority;

    @JsonPropertyDescription("Maximum queue size, 0 for unbounded (default 0).")
    @Min(0)
    @Max(Integer.MAX_VALUE)
    private Integer maxSize;

    @JsonPropertyDescription("Message time to live in seconds (default 3600).")
    @Min(0)
    @Max(Integer.MAX_VALUE)
    private Integer ttl;

    @JsonPropertyDescription("Keep failed messages in the dead-letter queue (default true).")
    private Boolean deadLetterQueue;

    @JsonPropertyDescription("Move a message to the DLQ once its retries are spent (default true).")
    private Boolean dlqAfterMaxRetries;

    @JsonPropertyDescription("Seconds a message waits before it can be delivered (default 0).")
    @Min(0)
    @Max(Integer.MAX_VALUE)
    private Integer delayedProcessing;

    @JsonPropertyDescription("Seconds a partition must be quiet before it delivers (default 0).")
    @Min(0)
    @Max(Integer.MAX_VALUE)
    private Integer windowBuffer;

    @JsonPropertyDescription("Apply retentionSeconds and completedRetentionSeconds (default false).")
    private Boolean retentionEnabled;

    @JsonPropertyDescription("Delete segments older than this, when retention is enabled (default 0).")
    @Min(0)
    @Max(Integer.MAX_VALUE)
    private Integer retentionSeconds;

    @JsonPropertyDescription("Delete segments every group consumed, this long after (default 0).")
    @Min(0)
    @Max(Integer.MAX_VALUE)
    private Integer completedRetentionSeconds;

    @JsonPropertyDescription("Evict messages older than this for every group, leases included; 0 is off (default 0).")
    @Min(0)
    @Max(Integer.MAX_VALUE)
    private Integer maxWaitTimeSeconds;

    @JsonPropertyDescription("Encrypt payloads at rest with the broker's key (default false).")
    private Boolean encryptionEnabled;

    @JsonPropertyDescription("Milliseconds a pop waits at least, 0..60000 (default 0).")
    @Min(0)
    @Max(60000)
    private Integer minPopWaitTime;

    @JsonPropertyDescription("Seconds a transactionId is remembered for deduplication; 0 disables it (default 3600).")
    @Min(0)
    @Max(Integer.MAX_VALUE)
    private Integer dedupWindowSeconds;

    @JsonPropertyDescription("Name of the sink that must have read a segment before retention may delete it; empty for none.")
    @Pattern("^[A-Za-z0-9._-]{0,64}$")
    private String retentionSinkHold;

    @JsonPropertyDescription("Seconds after which the sink hold is ignored, 60..31536000 (default 604800).")
    @Min(60)
    @Max(31536000)
    private Integer retentionSinkHoldMaxSeconds;

    public Integer getLeaseTime() {
        return leaseTime;
    }

    public void setLeaseTime(Integer leaseTime) {
        this.leaseTime = leaseTime;
    }

    public QueueOptions withLeaseTime(Integer leaseTime) {
        this.leaseTime = leaseTime;
        return this;
    }

    public Integer getRetryLimit() {
        return retryLimit;
    }

    public void setRetryLimit(Integer retryLimit) {
        this.retryLimit = retryLimit;
    }

    public QueueOptions withRetryLimit(Integer retryLimit) {
        this.retryLimit = retryLimit;
        return this;
    }

    public Integer getRetryDelay() {
        return retryDelay;
    }

    public void setRetryDelay(Integer retryDelay) {
        this.retryDelay = retryDelay;
    }

    public QueueOptions withRetryDelay(Integer retryDelay) {
        this.retryDelay = retryDelay;
        return this;
    }

    public Integer getPriority() {
        return priority;
    }

    public void setPriority(Integer priority) {
        this.priority = priority;
    }

    public QueueOptions withPriority(Integer priority) {
        this.priority = priority;
        return this;
    }

    public Integer getMaxSize() {
        return maxSize;
    }

    public void setMaxSize(Integer maxSize) {
        this.maxSize = maxSize;
    }

    public QueueOptions withMaxSize(Integer maxSize) {
        this.maxSize = maxSize;
        return this;
    }

    public Integer getTtl() {
        return ttl;
    }

    public void setTtl(Integer ttl) {
        this.ttl = ttl;
    }

    public QueueOptions withTtl(Integer ttl) {
        this.ttl = ttl;
        return this;
    }

    public Boolean getDeadLetterQueue() {
        return deadLetterQueue;
    }

    public void setDeadLetterQueue(Boolean deadLetterQueue) {
        this.deadLetterQueue = deadLetterQueue;
    }

    public QueueOptions withDeadLetterQueue(Boolean deadLetterQueue) {
        this.deadLetterQueue = deadLetterQueue;
        return this;
    }

    public Boolean getDlqAfterMaxRetries() {
        return dlqAfterMaxRetries;
    }

    public void setDlqAfterMaxRetries(Boolean dlqAfterMaxRetries) {
        this.dlqAfterMaxRetries = dlqAfterMaxRetries;
    }

    public QueueOptions withDlqAfterMaxRetries(Boolean dlqAfterMaxRetries) {
        this.dlqAfterMaxRetries = dlqAfterMaxRetries;
        return this;
    }

    public Integer getDelayedProcessing() {
        return delayedProcessing;
    }

    public void setDelayedProcessing(Integer delayedProcessing) {
        this.delayedProcessing = delayedProcessing;
    }

    public QueueOptions withDelayedProcessing(Integer delayedProcessing) {
        this.delayedProcessing = delayedProcessing;
        return this;
    }

    public Integer getWindowBuffer() {
        return windowBuffer;
    }

    public void setWindowBuffer(Integer windowBuffer) {
        this.windowBuffer = windowBuffer;
    }

    public QueueOptions withWindowBuffer(Integer windowBuffer) {
        this.windowBuffer = windowBuffer;
        return this;
    }

    public Boolean getRetentionEnabled() {
        return retentionEnabled;
    }

    public void setRetentionEnabled(Boolean retentionEnabled) {
        this.retentionEnabled = retentionEnabled;
    }

    public QueueOptions withRetentionEnabled(Boolean retentionEnabled) {
        this.retentionEnabled = retentionEnabled;
        return this;
    }

    public Integer getRetentionSeconds() {
        return retentionSeconds;
    }

    public void setRetentionSeconds(Integer retentionSeconds) {
        this.retentionSeconds = retentionSeconds;
    }

    public QueueOptions withRetentionSeconds(Integer retentionSeconds) {
        this.retentionSeconds = retentionSeconds;
        return this;
    }

    public Integer getCompletedRetentionSeconds() {
        return completedRetentionSeconds;
    }

    public void setCompletedRetentionSeconds(Integer completedRetentionSeconds) {
        this.completedRetentionSeconds = completedRetentionSeconds;
    }

    public QueueOptions withCompletedRetentionSeconds(Integer completedRetentionSeconds) {
        this.completedRetentionSeconds = completedRetentionSeconds;
        return this;
    }

    public Integer getMaxWaitTimeSeconds() {
        return maxWaitTimeSeconds;
    }

    public void setMaxWaitTimeSeconds(Integer maxWaitTimeSeconds) {
        this.maxWaitTimeSeconds = maxWaitTimeSeconds;
    }

    public QueueOptions withMaxWaitTimeSeconds(Integer maxWaitTimeSeconds) {
        this.maxWaitTimeSeconds = maxWaitTimeSeconds;
        return this;
    }

    public Boolean getEncryptionEnabled() {
        return encryptionEnabled;
    }

    public void setEncryptionEnabled(Boolean encryptionEnabled) {
        this.encryptionEnabled = encryptionEnabled;
    }

    public QueueOptions withEncryptionEnabled(Boolean encryptionEnabled) {
        this.encryptionEnabled = encryptionEnabled;
        return this;
    }

    public Integer getMinPopWaitTime() {
        return minPopWaitTime;
    }

    public void setMinPopWaitTime(Integer minPopWaitTime) {
        this.minPopWaitTime = minPopWaitTime;
    }

    public QueueOptions withMinPopWaitTime(Integer minPopWaitTime) {
        this.minPopWaitTime = minPopWaitTime;
        return this;
    }

    public Integer getDedupWindowSeconds() {
        return dedupWindowSeconds;
    }

    public void setDedupWindowSeconds(Integer dedupWindowSeconds) {
        this.dedupWindowSeconds = dedupWindowSeconds;
    }

    public QueueOptions withDedupWindowSeconds(Integer dedupWindowSeconds) {
        this.dedupWindowSeconds = dedupWindowSeconds;
        return this;
    }

    public String getRetentionSinkHold() {
        return retentionSinkHold;
    }

    public void setRetentionSinkHold(String retentionSinkHold) {
        this.retentionSinkHold = retentionSinkHold;
    }

    public QueueOptions withRetentionSinkHold(String retentionSinkHold) {
        this.retentionSinkHold = retentionSinkHold;
        return this;
    }

    public Integer getRetentionSinkHoldMaxSeconds() {
        return retentionSinkHoldMaxSeconds;
    }

    public void setRetentionSinkHoldMaxSeconds(Integer retentionSinkHoldMaxSeconds) {
        this.retentionSinkHoldMaxSeconds = retentionSinkHoldMaxSeconds;
    }

    public QueueOptions withRetentionSinkHoldMaxSeconds(Integer retentionSinkHoldMaxSeconds) {
        this.retentionSinkHoldMaxSeconds = retentionSinkHoldMaxSeconds;
        return this;
    }
}
