package io.queen.operator.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;

/**
 * How much one call of the broker's tenant purge may delete; small steps keep each transaction short.
 * The broker takes a 32-bit integer of at least 1 for each budget.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class PurgeBudget {
    public static final int DEFAULT_MAX_QUEUES = 10;
    public static final int DEFAULT_MAX_ROWS = 20_000;

    @JsonPropertyDescription("Queues deleted per step (default 10).")
    @Min(1)
    @Max(Integer.MAX_VALUE)
    private Integer maxQueuesPerStep;

    @JsonPropertyDescription("Rows deleted per table per step (default 20000).")
    @Min(1)
    @Max(Integer.MAX_VALUE)
    private Integer maxRowsPerStep;

    public Integer getMaxQueuesPerStep() {
        return maxQueuesPerStep;
    }

    public void setMaxQueuesPerStep(Integer maxQueuesPerStep) {
        this.maxQueuesPerStep = maxQueuesPerStep;
    }

    public Integer getMaxRowsPerStep() {
        return maxRowsPerStep;
    }

    public void setMaxRowsPerStep(Integer maxRowsPerStep) {
        this.maxRowsPerStep = maxRowsPerStep;
    }

    public int maxQueuesOrDefault() {
        return maxQueuesPerStep == null ? DEFAULT_MAX_QUEUES : maxQueuesPerStep;
    }

    public int maxRowsOrDefault() {
        return maxRowsPerStep == null ? DEFAULT_MAX_ROWS : maxRowsPerStep;
    }
}
