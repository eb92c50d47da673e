package io.queen.operator.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import java.util.Objects;

/** What the broker's purge route reported after the last step. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class PurgeProgress {
    @JsonPropertyDescription("Phase of the last step: timers, queue-residue, queues, sweep or complete.")
    private String phase;

    @JsonPropertyDescription("True once the broker holds no data of the tenant.")
    private Boolean done;

    @JsonPropertyDescription("Queues deleted so far, summed over the steps.")
    private Long queuesDeleted;

    @JsonPropertyDescription("Queues still to delete after the last step.")
    private Long queuesRemaining;

    @JsonPropertyDescription("Purge steps called so far.")
    private Long steps;

    public String getPhase() {
        return phase;
    }

    public void setPhase(String phase) {
        this.phase = phase;
    }

    public Boolean getDone() {
        return done;
    }

    public void setDone(Boolean done) {
        this.done = done;
    }

    public Long getQueuesDeleted() {
        return queuesDeleted;
    }

    public void setQueuesDeleted(Long queuesDeleted) {
        this.queuesDeleted = queuesDeleted;
    }

    public Long getQueuesRemaining() {
        return queuesRemaining;
    }

    public void setQueuesRemaining(Long queuesRemaining) {
        this.queuesRemaining = queuesRemaining;
    }

    public Long getSteps() {
        return steps;
    }

    public void setSteps(Long steps) {
        this.steps = steps;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PurgeProgress p && Objects.equals(phase, p.phase) && Objects.equals(done, p.done)
                && Objects.equals(queuesDeleted, p.queuesDeleted) && Objects.equals(queuesRemaining, p.queuesRemaining)
                && Objects.equals(steps, p.steps);
    }

    @Override
    public int hashCode() {
        return Objects.hash(phase, done, queuesDeleted, queuesRemaining, steps);
    }
}
