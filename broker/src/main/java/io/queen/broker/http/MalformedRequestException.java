package io.queen.broker.http;

/**
 * The request's body could not be read as HTTP frames it (a chunk size that is not hex, fewer bytes
 * than declared): a 400, and the connection is closed since where the next request starts is unknown.
 */
public final class MalformedRequestException extends BadRequestException {
    public MalformedRequestException(String message) {
        super(message);
    }

    @Override
    public String code() {
        return "malformed_request";
    }

    @Override
    public boolean closesConnection() {
        return true;
    }
}
