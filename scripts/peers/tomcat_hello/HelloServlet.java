// Spring Boot 3's answers without Spring: what a @RestController's String
// and JSON object become once Spring's message converters have written them
// through Tomcat. The String converter sets text/plain;charset=UTF-8 and the
// length, writes, flushes; the Jackson converter sets application/json,
// writes and flushes with no length, so Tomcat chunks it on HTTP/1.1 (and
// ends it by closing on HTTP/1.0). Mapped to "/", as Spring's
// DispatcherServlet is; every other path gets Tomcat's own 404.
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

public final class HelloServlet extends HttpServlet {
    private static final byte[] TEXT = "Hello!!!".getBytes(StandardCharsets.UTF_8);
    private static final byte[] JSON = "{\"hello\":\"world\"}".getBytes(StandardCharsets.UTF_8);

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        switch (request.getServletPath()) {
            case "/" -> {
                response.setContentType("text/plain;charset=UTF-8");
                response.setContentLength(TEXT.length);
                write(response, TEXT);
            }
            case "/json" -> {
                response.setContentType("application/json");
                write(response, JSON);
            }
            default -> response.sendError(HttpServletResponse.SC_NOT_FOUND);
        }
    }

    private static void write(HttpServletResponse response, byte[] body) throws IOException {
        OutputStream out = response.getOutputStream();
        out.write(body);
        out.flush();
    }
}
