// A JSR 356 (Jakarta WebSocket 2.1) echo on Tomcat 10.1, as Spring's
// whole-message handlers see it: one @OnMessage for text, one for binary,
// each sent back unchanged with the session's defaults (Tomcat's 8 KiB
// message buffers, no idle timeout, no pings, permessage-deflate offered by
// Tomcat's WsServerContainer). Registered by EchoListener, programmatically,
// as Spring registers its endpoints, so web.xml can stay metadata-complete.
import jakarta.websocket.OnMessage;
import jakarta.websocket.Session;
import jakarta.websocket.server.ServerEndpoint;
import java.io.IOException;
import java.nio.ByteBuffer;

@ServerEndpoint("/myHandler")
public final class EchoEndpoint {
    @OnMessage
    public void text(Session session, String message) throws IOException {
        session.getBasicRemote().sendText(message);
    }

    @OnMessage
    public void binary(Session session, ByteBuffer message) throws IOException {
        session.getBasicRemote().sendBinary(message);
    }
}
